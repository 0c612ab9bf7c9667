// The two priority queues of waiting jobs (Chadha et al.): rigid (rigid and
// moldable jobs) and elastic (malleable and evolving jobs). Both are ordered
// by priority: urgent jobs first, then the higher Job::priority, then arrival
// (submit time, then id).
// PENDING jobs that may not start yet (held, waiting for a dependency or
// their begin time) are kept apart, in the same order: passes and policies
// never walk them; listings (`sched queue`) do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/change_log.hpp"
#include "sched/job.hpp"
#include "sched/node_pool.hpp"

namespace sched {

class PendingQueue {
 public:
  // (not urgent, -priority, submit time, id): the smallest key has the
  // highest priority.
  using Key = std::tuple<bool, std::int64_t, double, JobId>;
  static Key key_of(const Job& job);

  // A change to the offered order, for a consumer that keeps a copy of the
  // queue across passes (the Lua host's ctx.pending) and patches it instead
  // of walking the whole queue again. Reorder (a rekey) asks it to rebuild.
  struct Change {
    enum class Kind : std::uint8_t { Insert, Remove, Reorder };
    Kind kind;
    Key key;         // the job's place in the order
    const Job* job;  // valid while the job is queued (Insert only)
    int partition;   // the job's Job::partition, so a consumer of one partition can skip others
  };
  // The sequence number just past the last change; a consumer remembers it.
  std::uint64_t changes_end() const { return changes_.end(); }
  // The changes from sequence number `from` on, or nullopt when they are no
  // longer kept (the consumer then rebuilds its copy).
  std::optional<std::span<const Change>> changes_since(std::uint64_t from) const {
    return changes_.since(from);
  }

 private:
  struct Entry {
    Key key;
    const Job* job;
    bool operator<(const Entry& other) const { return key < other.key; }
  };

 public:
  // The job must stay at the same address while queued, and its priority
  // may change only just before a rekey().
  void push(const Job& job);
  // A job that may not start yet.
  void push_waiting(const Job& job);
  void erase(const Job& job);  // from wherever it is
  // After the priorities of queued jobs changed: every queue sorted anew by
  // them (a sort of the whole queue; the priority calc period's work).
  void rekey();
  bool is_waiting(const Job& job) const { return waiting_.count(Entry{key_of(job), &job}) > 0; }
  // Offered, and after every other offered job (a submission that appended).
  bool is_last_offered(const Job& job) const;
  // The jobs a pass offers to the policy.
  std::size_t size() const { return rigid_.size() + elastic_.size(); }
  std::size_t waiting_size() const { return waiting_.size(); }
  // Every PENDING job.
  std::size_t listing_size() const { return size() + waiting_.size(); }
  std::size_t rigid_size() const { return rigid_.size(); }
  std::size_t elastic_size() const { return elastic_.size(); }
  // How many PENDING jobs of `user` there are, waiting ones included
  // (schedd's per-user limit asks on every submission: counted as jobs come
  // and go, not by walking).
  std::size_t count_of(const std::string& user) const;

  // Walks both queues merged in priority order, one job at a time, so a pass
  // pays only for the part of a long queue it looks at. Invalidated by any
  // change to the queue.
  class Cursor {
   public:
    // `waiting`: also the jobs that may not start yet (a listing's walk).
    explicit Cursor(const PendingQueue& queue, bool waiting = false);
    // From just after where `job` has its place (queued or not), so that a
    // listing continues after its last job without walking what it listed.
    Cursor(const PendingQueue& queue, const Job& job, bool waiting = false);
    // The next job, or nullptr at the end.
    const Job* next();

   private:
    std::set<Entry>::const_iterator r_, r_end_, e_, e_end_, w_, w_end_;
  };
  // The jobs a pass offers.
  Cursor cursor() const { return Cursor(*this); }
  Cursor cursor_after(const Job& job) const { return Cursor(*this, job); }
  // Every PENDING job, in priority order.
  Cursor listing() const { return Cursor(*this, true); }
  Cursor listing_after(const Job& job) const { return Cursor(*this, job, true); }
  // Both queues merged in priority order.
  std::vector<const Job*> merged() const;

 private:
  std::set<Entry>& queue_of(const Job& job);
  void log(Change change);

  std::set<Entry> rigid_;
  std::set<Entry> elastic_;
  std::set<Entry> waiting_;          // both kinds
  NodePool<std::set<Entry>> spare_;  // the three sets' nodes, for the next push
  std::unordered_map<std::string, std::size_t> per_user_;
  // Dropped when it outgrows the queue (a consumer that far behind rebuilds).
  ChangeLog<Change> changes_;
};

}  // namespace sched
