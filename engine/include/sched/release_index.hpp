// The running jobs' estimated ends, kept sorted by the engine as jobs start,
// end, resize or have their limit moved (issue 15): a pass's release profile
// (ctx:earliest_start, ctx:release_profile) reads it instead of collecting
// and sorting every running job at every pass.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "sched/job.hpp"
#include "sched/node_pool.hpp"

namespace sched {

class ReleaseIndex {
 public:
  struct Entry {
    double end;  // Job::est_end(), or +inf when the job has none
    JobId job;
    int size;  // the nodes it gives back then
  };

  // The job joined the engine's running set: its entry as the job is now
  // (a job holding no node is a member without an entry).
  void join(const Job& job);
  // A member changed (size, limit): its entry follows; anyone else: nothing.
  void update(const Job& job);
  // The job left the running set.
  void leave(JobId id);
  // Sorted by end, then job id.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  struct Member {
    double end = 0;  // its entry's end and size; size 0: no entry
    int size = 0;
  };
  std::vector<Entry>::iterator find(double end, JobId id);
  void relist(JobId id, Member& member, const Job& job);

  std::vector<Entry> entries_;
  std::unordered_map<JobId, Member> members_;
  NodePool<decltype(members_)> spare_;  // left members' nodes
};

}  // namespace sched
