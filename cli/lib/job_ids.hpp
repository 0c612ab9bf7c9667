// Job ids as users type them for cancel, show, hold, release and requeue:
// "12", "12_3" (task 3 of array 12), "12_[1-3,7]" (several tasks), lists
// with ','; and the names arrays are listed under (squeue's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sched::cli {

struct JobIdRef {
  std::int64_t id = 0;
  std::optional<int> task;   // set: task `task` of array `id`
  std::string text() const;  // as typed back: "12" or "12_3"
};

// Throws std::runtime_error naming the bad word ("'x' is not a job id").
std::vector<JobIdRef> parse_job_refs(const std::vector<std::string>& words);

// What `sched queue` shows for the pending tasks of array `array_id` that
// wait together: "12_[5-19%4]" (ranges of consecutive indices joined by ','),
// or "12_5" for one task without a throttle shown.
std::string pending_array_name(std::int64_t array_id, const std::vector<int>& indices,
                               int throttle);

}  // namespace sched::cli
