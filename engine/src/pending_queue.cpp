#include "sched/pending_queue.hpp"

namespace sched {

PendingQueue::Key PendingQueue::key_of(const Job& job) {
  return {!job.spec.urgent, job.submit_time, job.id};
}

std::set<PendingQueue::Entry>& PendingQueue::queue_of(const Job& job) {
  return is_resizable(job.spec.kind) ? elastic_ : rigid_;
}

void PendingQueue::push(const Job& job) {
  if (queue_of(job).insert(Entry{key_of(job), &job}).second) ++per_user_[job.spec.user];
}

void PendingQueue::erase(const Job& job) {
  if (queue_of(job).erase(Entry{key_of(job), &job}) == 0) return;
  const auto it = per_user_.find(job.spec.user);
  if (it != per_user_.end() && --it->second == 0) per_user_.erase(it);
}

std::size_t PendingQueue::count_of(const std::string& user) const {
  const auto it = per_user_.find(user);
  return it == per_user_.end() ? 0 : it->second;
}

PendingQueue::Cursor::Cursor(const PendingQueue& queue)
    : r_(queue.rigid_.begin()),
      r_end_(queue.rigid_.end()),
      e_(queue.elastic_.begin()),
      e_end_(queue.elastic_.end()) {}

PendingQueue::Cursor::Cursor(const PendingQueue& queue, const Job& job)
    : r_(queue.rigid_.upper_bound(Entry{key_of(job), nullptr})),
      r_end_(queue.rigid_.end()),
      e_(queue.elastic_.upper_bound(Entry{key_of(job), nullptr})),
      e_end_(queue.elastic_.end()) {}

const Job* PendingQueue::Cursor::next() {
  if (r_ == r_end_ && e_ == e_end_) return nullptr;
  if (e_ == e_end_ || (r_ != r_end_ && *r_ < *e_)) return (r_++)->job;
  return (e_++)->job;
}

std::vector<const Job*> PendingQueue::merged() const {
  std::vector<const Job*> jobs;
  jobs.reserve(size());
  Cursor c = cursor();
  while (const Job* job = c.next()) jobs.push_back(job);
  return jobs;
}

}  // namespace sched
