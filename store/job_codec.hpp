// The JSON text kept for the parts of a job that are not columns of their own.
// A missing key reads as the field's default, so a field added to Job later
// needs no schema change; a value of the wrong type is a CodecError.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sched/job.hpp"

namespace sched::store {

class CodecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The spec except name, user and kind, which are columns.
std::string encode_spec(const JobSpec& spec);
void decode_spec(const std::string& text, JobSpec& spec);

// What the engine learned while the job lived: outcome, counters, MTCT and
// power, the pending resize request, limits and node-seconds bookkeeping.
std::string encode_progress(const Job& job);
void decode_progress(const std::string& text, Job& job);

// A JSON array of strings (node names, state names).
std::string encode_strings(const std::vector<std::string>& strings);
std::vector<std::string> decode_strings(const std::string& text);

// A JSON array of job ids.
std::string encode_ids(const std::vector<JobId>& ids);

}  // namespace sched::store
