// The process map a node's PMIx server gives an MPI step's ranks (issue 16
// item 2, --mpi=pmix; docs/protocol.md §6): which ranks each node of the
// step holds, in the shapes PMIx wants them (PMIx_generate_ppn's input, a
// node's local peers), and the PMIx fence's binary contribution as text for
// the fence relay. Pure functions, so they are unit-tested without libpmix.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::agent {

struct PmixMap {
  std::vector<std::string> nodes;  // the step's nodes, in the step's order
  std::vector<int> node_of_rank;   // rank → index in `nodes`

  // The ranks on node `node`, ascending.
  std::vector<int> ranks_on(int node) const;
  // A rank's index among the ranks of its node (PMIx's local and node rank:
  // one step per node namespace); -1 for a rank out of range.
  int local_rank(int rank) const;
  // "0,1;2,3": each node's ranks, comma-separated, nodes by ';' (the input
  // of PMIx_generate_ppn, in the order of `nodes`).
  std::string ppn() const;
  // "n1,n2": the nodes, for PMIx_generate_regex.
  std::string node_list() const;
  // "2,3": the ranks on node `node` (PMIX_LOCAL_PEERS).
  std::string peers(int node) const;
};

// The map of `tasks` ranks of a step over `nodes` by `distribution`
// ("block" or "cyclic", tasks/task_layout.hpp); nullopt for a distribution
// tasks/ does not know or a step with fewer ranks than nodes.
std::optional<PmixMap> make_pmix_map(int tasks, const std::vector<std::string>& nodes,
                                     const std::string& distribution);

// A PMIx fence's data (binary) as text for a pmi.fence entry ("<bytes>:"
// then Z85 of the bytes padded to a multiple of 4), and back; nullopt for
// text that is not such an encoding.
std::string encode_fence_blob(std::string_view bytes);
std::optional<std::string> decode_fence_blob(std::string_view text);

}  // namespace sched::agent
