// The PMI fences of MPI steps under way (issue 16 item 2, docs/protocol.md
// §6): each node of a step sends its part of fence N (the entries its ranks
// put); once every node of the step has, the merged entries go back to all
// of them. One purpose: gathering. The handlers (handlers/pmi.cpp) send.
//
// No timeout: a PMI barrier lasts as long as the slowest rank takes to reach
// it (MPI_Finalize waits for every rank). A fence cannot hang on a dead rank
// or node instead: a rank's early end fails the step (pmi.abort), and a lost
// node ends the job, whose ranks everywhere are then killed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/job.hpp"

namespace sched::daemon {

class PmiFences {
 public:
  struct Complete {
    std::map<std::string, std::string> entries;  // the union of every node's
  };

  // `node`'s part of fence `fence` of the step, whose nodes are `nodes`.
  // Returns the merged entries when this was the last part. Throws
  // std::invalid_argument when `node` is not one of `nodes`, or sent this
  // fence already, or a key it sends another node set to another value.
  std::optional<Complete> arrive(JobId job, std::int64_t step, std::int64_t fence,
                                 const std::vector<std::string>& nodes, const std::string& node,
                                 const std::map<std::string, std::string>& entries);
  // Forgets the step's fences (it failed or ended).
  void drop(JobId job, std::int64_t step);
  // Fences waiting for more nodes (for tests and the stats).
  std::size_t open() const { return fences_.size(); }

 private:
  struct Gathering {
    std::set<std::string> arrived;
    std::map<std::string, std::string> entries;
  };
  std::map<std::tuple<JobId, std::int64_t, std::int64_t>, Gathering> fences_;
};

}  // namespace sched::daemon
