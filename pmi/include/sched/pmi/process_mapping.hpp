// PMI_process_mapping, the KVS entry that tells MPICH which ranks share a
// node (as Hydra and Slurm publish it): "(vector,(NODE,COUNT,RANKS),...)",
// each block saying COUNT nodes from NODE on hold RANKS consecutive ranks
// each, the blocks covering the ranks in order.
#pragma once

#include <string>
#include <vector>

namespace sched::pmi {

// `node_of_rank[r]`: the index of the node rank r runs on. Empty: "".
std::string process_mapping(const std::vector<int>& node_of_rank);

}  // namespace sched::pmi
