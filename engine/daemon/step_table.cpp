#include "step_table.hpp"

namespace sched::daemon {

StepRecord* StepTable::find(JobId job, std::int64_t step) {
  auto it = steps_.find({job, step});
  return it == steps_.end() ? nullptr : &it->second;
}

std::pair<std::int64_t, StepRecord*> StepTable::newest(JobId job) {
  // Keys sort by (job, step): the last key below (job + 1, 0) is the newest.
  auto it = steps_.lower_bound({job + 1, 0});
  if (it == steps_.begin()) return {0, nullptr};
  --it;
  if (it->first.first != job) return {0, nullptr};
  return {it->first.second, &it->second};
}

void StepTable::task_exited(JobId job, std::int64_t step) {
  auto it = steps_.find({job, step});
  if (it != steps_.end() && --it->second.remaining <= 0) steps_.erase(it);
}

}  // namespace sched::daemon
