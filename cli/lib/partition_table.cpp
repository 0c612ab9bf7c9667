#include "partition_table.hpp"

#include "nodelist.hpp"
#include "slurm_time.hpp"
#include "table.hpp"

namespace sched::cli {

std::string render_partitions(const std::vector<PartitionRow>& rows) {
  Table table({{"PARTITION", Align::Left},
               {"AVAIL", Align::Left},
               {"POLICY", Align::Left},
               {"TIMELIMIT", Align::Right},
               {"MAXNODES", Align::Right},
               {"NODES", Align::Right},
               {"IDLE", Align::Right},
               {"PENDING", Align::Right},
               {"RUNNING", Align::Right},
               {"ALLOW", Align::Left},
               {"NODELIST", Align::Left}});
  for (const PartitionRow& row : rows) {
    std::string allow;
    for (const std::string& user : row.users) allow += (allow.empty() ? "" : ",") + user;
    for (const std::string& group : row.groups) allow += (allow.empty() ? "@" : ",@") + group;
    table.add_row({row.name + (row.is_default ? "*" : ""), row.state,
                   row.policy.empty() ? "-" : row.policy + (row.own_policy ? "" : " (global)"),
                   row.max_time_s > 0 ? format_time_limit(row.max_time_s) : "UNLIMITED",
                   row.max_nodes > 0 ? std::to_string(row.max_nodes) : "UNLIMITED",
                   std::to_string(row.nodes.size()), std::to_string(row.nodes_idle),
                   std::to_string(row.pending), std::to_string(row.running),
                   allow.empty() ? "all" : allow,
                   row.nodes.empty() ? "-" : compress_sorted_nodelist(row.nodes)});
  }
  return table.render();
}

}  // namespace sched::cli
