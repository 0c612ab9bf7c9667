#include "sched/pending_queue.hpp"

#include <algorithm>

namespace sched {

PendingQueue::Key PendingQueue::key_of(const Job& job) {
  return {!job.spec.urgent, -job.priority, job.submit_time, job.id};
}

std::set<PendingQueue::Entry>& PendingQueue::queue_of(const Job& job) {
  return is_resizable(job.spec.kind) ? elastic_ : rigid_;
}

void PendingQueue::log(Change change) { changes_.append(change, 4096 + 2 * size()); }

void PendingQueue::push(const Job& job) {
  const Key key = key_of(job);
  if (!pooled_insert(queue_of(job), spare_, Entry{key, &job}).second) return;
  ++per_user_[job.spec.user];
  log(Change{Change::Kind::Insert, key, &job, job.partition});
}

void PendingQueue::push_waiting(const Job& job) {
  if (pooled_insert(waiting_, spare_, Entry{key_of(job), &job}).second) ++per_user_[job.spec.user];
}

bool PendingQueue::is_last_offered(const Job& job) const {
  const std::set<Entry>& queue = is_resizable(job.spec.kind) ? elastic_ : rigid_;
  const std::set<Entry>& other = is_resizable(job.spec.kind) ? rigid_ : elastic_;
  return !queue.empty() && queue.rbegin()->job == &job &&
         (other.empty() || other.rbegin()->key < queue.rbegin()->key);
}

void PendingQueue::erase(const Job& job) {
  const Entry entry{key_of(job), &job};
  std::set<Entry>& queue = queue_of(job);
  if (const auto it = queue.find(entry); it != queue.end()) {
    spare_.keep(queue.extract(it));
    log(Change{Change::Kind::Remove, entry.key, nullptr, entry.job->partition});
  } else if (const auto w = waiting_.find(entry); w != waiting_.end()) {
    spare_.keep(waiting_.extract(w));
  } else {
    return;
  }
  const auto it = per_user_.find(job.spec.user);
  if (it != per_user_.end() && --it->second == 0) per_user_.erase(it);
}

void PendingQueue::rekey() {
  std::vector<Entry> entries;
  for (std::set<Entry>* queue : {&rigid_, &elastic_, &waiting_}) {
    entries.clear();
    entries.reserve(queue->size());
    for (const Entry& entry : *queue) entries.push_back(Entry{key_of(*entry.job), entry.job});
    std::sort(entries.begin(), entries.end());
    // Sorted already: each insert at the end is constant time.
    std::set<Entry> sorted;
    for (const Entry& entry : entries) sorted.insert(sorted.end(), entry);
    queue->swap(sorted);
  }
  log(Change{Change::Kind::Reorder, {}, nullptr, -1});
}

std::size_t PendingQueue::count_of(const std::string& user) const {
  const auto it = per_user_.find(user);
  return it == per_user_.end() ? 0 : it->second;
}

PendingQueue::Cursor::Cursor(const PendingQueue& queue, bool waiting)
    : r_(queue.rigid_.begin()),
      r_end_(queue.rigid_.end()),
      e_(queue.elastic_.begin()),
      e_end_(queue.elastic_.end()),
      w_(waiting ? queue.waiting_.begin() : queue.waiting_.end()),
      w_end_(queue.waiting_.end()) {}

PendingQueue::Cursor::Cursor(const PendingQueue& queue, const Job& job, bool waiting)
    : r_(queue.rigid_.upper_bound(Entry{key_of(job), nullptr})),
      r_end_(queue.rigid_.end()),
      e_(queue.elastic_.upper_bound(Entry{key_of(job), nullptr})),
      e_end_(queue.elastic_.end()),
      w_(waiting ? queue.waiting_.upper_bound(Entry{key_of(job), nullptr}) : queue.waiting_.end()),
      w_end_(queue.waiting_.end()) {}

const Job* PendingQueue::Cursor::next() {
  // The smallest of the three heads.
  std::set<Entry>::const_iterator* best = nullptr;
  if (r_ != r_end_) best = &r_;
  if (e_ != e_end_ && (!best || *e_ < **best)) best = &e_;
  if (w_ != w_end_ && (!best || *w_ < **best)) best = &w_;
  if (!best) return nullptr;
  return ((*best)++)->job;
}

std::vector<const Job*> PendingQueue::merged() const {
  std::vector<const Job*> jobs;
  jobs.reserve(size());
  Cursor c = cursor();
  while (const Job* job = c.next()) jobs.push_back(job);
  return jobs;
}

}  // namespace sched
