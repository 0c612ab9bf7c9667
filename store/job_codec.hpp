// The JSON text kept for the parts of a job (and of an event) that are not
// columns of their own. A missing key reads as the field's default, so a field
// added to Job or Event later needs no schema change; a value of the wrong
// type is a CodecError.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sched/event.hpp"
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

// An event's topic fields (expected_start, lower_w, upper_w, power_w, pass_s,
// actions, reason, code, file, line): those away from their default, by name.
std::string encode_event_fields(const Event& event);
void decode_event_fields(const std::string& text, Event& event);

}  // namespace sched::store
