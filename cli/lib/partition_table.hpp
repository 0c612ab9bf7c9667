// The table of `sched partition` (issue 20 item 1), from plain rows so that it
// can be tested without a daemon: one line per partition, as sinfo's summary
// names them (the default partition's name ends in '*').
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sched::cli {

struct PartitionRow {
  std::string name;
  bool is_default = false;
  std::string state;   // up, drain, down
  std::string policy;  // the policy running its passes
  bool own_policy = false;
  double max_time_s = 0;  // 0: none
  int max_nodes = 0;      // 0: none
  std::vector<std::string> nodes;
  int nodes_idle = 0;
  std::int64_t pending = 0;
  std::int64_t running = 0;
  std::vector<std::string> users;
  std::vector<std::string> groups;
};

// PARTITION AVAIL POLICY TIMELIMIT MAXNODES NODES IDLE PENDING RUNNING ALLOW
// NODELIST. POLICY is the partition's own, or the engine's followed by
// "(global)"; TIMELIMIT and MAXNODES "UNLIMITED" when none; ALLOW "all", or
// the users and "@group"s allowed.
std::string render_partitions(const std::vector<PartitionRow>& rows);

}  // namespace sched::cli
