// Job arrays (issue 18 item 1): the throttle (%N) and the lookups by array id.
// A task's start or end re-decides its own array only, never the queue: tasks
// over the throttle wait in the pending queue's waiting set
// (JobArrayTaskLimit), where passes and policies never see them.
#include <limits>

#include "sched/engine.hpp"

namespace sched {

Engine::ArrayState& Engine::array_state(const Job& job) {
  ArrayState& state = arrays_[job.spec.extra->array_job_id];
  if (state.first == 0) {  // a restored task: its array's shape from its --array text
    state.first = job.spec.extra->array_job_id;
    state.throttle = job.spec.extra->array_throttle;
    auto parsed = parse_job_array(job.spec.extra->array, std::numeric_limits<int>::max());
    state.count = parsed.ok() ? parsed->count() : 1;
  }
  return state;
}

void Engine::admit_array_task(Job& job, bool started) {
  ArrayState& state = array_state(job);
  job.array_throttled = false;
  // A restored task that holds nodes counts even above the throttle (a
  // lowered limit): the ones waiting then wait for more to end.
  if (state.throttle == 0 || started || state.admitted < state.throttle) {
    ++state.admitted;
    return;
  }
  job.array_throttled = true;
  state.throttled.insert(job.id);
}

void Engine::array_task_ended(Job& job) {
  auto it = arrays_.find(job.spec.extra->array_job_id);
  if (it == arrays_.end()) return;
  ArrayState& state = it->second;
  if (job.array_throttled) {  // cancelled while it waited for the throttle
    job.array_throttled = false;
    state.throttled.erase(job.id);
    return;
  }
  --state.admitted;
  while (!state.throttled.empty() && (state.throttle == 0 || state.admitted < state.throttle)) {
    const JobId next = *state.throttled.begin();
    state.throttled.erase(state.throttled.begin());
    Job* task = job_mut(next);
    if (!task || task->state != JobState::Pending) continue;
    task->array_throttled = false;
    ++state.admitted;
    touch(*task);
    ++state_version_;
    refresh_eligibility(*task);
  }
}

Result<int> Engine::cancel_array(JobId array_id) {
  const std::vector<JobId> tasks = array_tasks(array_id);
  if (tasks.empty()) return Status::not_found("no job array " + std::to_string(array_id));
  int cancelled = 0;
  // The throttled ones first, so that cancelling a started task does not let
  // a waiting one in for a moment.
  for (int round = 0; round < 2; ++round) {
    for (JobId id : tasks) {
      const Job* job = find_job(id);
      if (!job || is_terminal(job->state) || job->state == JobState::Completing) continue;
      if ((round == 0) != (job->state == JobState::Pending)) continue;
      if (cancel(id).ok()) ++cancelled;
    }
  }
  return cancelled;
}

std::vector<JobId> Engine::array_tasks(JobId array_id) const {
  std::vector<JobId> tasks;
  if (auto it = arrays_.find(array_id); it != arrays_.end()) {
    for (JobId id = it->second.first; id < it->second.first + it->second.count; ++id) {
      const Job* job = find_job(id);
      if (job && job->spec.extra->array_job_id == array_id) tasks.push_back(id);
    }
  }
  return tasks;
}

std::optional<JobId> Engine::array_task(JobId array_id, int index) const {
  auto it = arrays_.find(array_id);
  if (it == arrays_.end()) return std::nullopt;
  // Ids follow the indices in ascending order: a binary search over ids.
  JobId lo = it->second.first;
  JobId hi = it->second.first + it->second.count - 1;
  while (lo <= hi) {
    const JobId mid = lo + (hi - lo) / 2;
    const Job* job = find_job(mid);
    if (!job || job->spec.extra->array_job_id != array_id)
      break;  // a restored array's gap: walk it
    if (job->spec.extra->array_task_id == index) return mid;
    if (job->spec.extra->array_task_id < index) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  for (JobId id : array_tasks(array_id)) {
    if (find_job(id)->spec.extra->array_task_id == index) return id;
  }
  return std::nullopt;
}

}  // namespace sched
