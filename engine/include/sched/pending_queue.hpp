// The two priority queues of waiting jobs (Chadha et al.): rigid (rigid and
// moldable jobs) and elastic (malleable and evolving jobs). Both are ordered
// by priority: urgent jobs first, then arrival (submit time, then id).
#pragma once

#include <cstddef>
#include <set>
#include <tuple>
#include <vector>

#include "sched/job.hpp"

namespace sched {

class PendingQueue {
 public:
  void push(const Job& job);
  void erase(const Job& job);
  std::size_t size() const { return rigid_.size() + elastic_.size(); }
  std::size_t rigid_size() const { return rigid_.size(); }
  std::size_t elastic_size() const { return elastic_.size(); }
  // Both queues merged in priority order.
  std::vector<JobId> merged() const;

 private:
  // (not urgent, submit time, id): the smallest key has the highest priority.
  using Key = std::tuple<bool, double, JobId>;
  static Key key_of(const Job& job);
  std::set<Key>& queue_of(const Job& job);

  std::set<Key> rigid_;
  std::set<Key> elastic_;
};

}  // namespace sched
