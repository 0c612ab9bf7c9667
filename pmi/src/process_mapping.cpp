#include "sched/pmi/process_mapping.hpp"

namespace sched::pmi {

std::string process_mapping(const std::vector<int>& node_of_rank) {
  if (node_of_rank.empty()) return "";
  // Runs of consecutive ranks on one node...
  struct Run {
    int node, ranks;
  };
  std::vector<Run> runs;
  for (int node : node_of_rank) {
    if (!runs.empty() && runs.back().node == node) {
      ++runs.back().ranks;
    } else {
      runs.push_back({node, 1});
    }
  }
  // ... then runs of equal size on consecutive nodes become one block.
  struct Block {
    int node, count, ranks;
  };
  std::vector<Block> blocks;
  for (const Run& run : runs) {
    if (!blocks.empty()) {
      Block& last = blocks.back();
      if (last.ranks == run.ranks && last.node + last.count == run.node) {
        ++last.count;
        continue;
      }
    }
    blocks.push_back({run.node, 1, run.ranks});
  }
  std::string text = "(vector";
  for (const Block& b : blocks) {
    text += ",(" + std::to_string(b.node) + "," + std::to_string(b.count) + "," +
            std::to_string(b.ranks) + ")";
  }
  return text + ")";
}

}  // namespace sched::pmi
