#include "sched/pending_queue.hpp"

namespace sched {

PendingQueue::Key PendingQueue::key_of(const Job& job) {
  return {!job.spec.urgent, job.submit_time, job.id};
}

std::set<PendingQueue::Key>& PendingQueue::queue_of(const Job& job) {
  return is_resizable(job.spec.kind) ? elastic_ : rigid_;
}

void PendingQueue::push(const Job& job) { queue_of(job).insert(key_of(job)); }

void PendingQueue::erase(const Job& job) { queue_of(job).erase(key_of(job)); }

std::vector<JobId> PendingQueue::merged() const {
  std::vector<JobId> ids;
  ids.reserve(size());
  auto r = rigid_.begin();
  auto e = elastic_.begin();
  while (r != rigid_.end() || e != elastic_.end()) {
    if (e == elastic_.end() || (r != rigid_.end() && *r < *e)) {
      ids.push_back(std::get<2>(*r++));
    } else {
      ids.push_back(std::get<2>(*e++));
    }
  }
  return ids;
}

}  // namespace sched
