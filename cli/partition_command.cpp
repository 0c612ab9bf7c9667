// `sched partition` (issue 20 item 1): the partitions, as sinfo's summary and
// scontrol show partition show them, and an admin's change of one's state
// (`sched partition set NAME up|drain|down`, scontrol update PartitionName=).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "partition_table.hpp"

namespace sched::cli {
namespace {

struct PartitionArgs {
  bool json = false;
  std::string only;  // --partition: list this one alone
  std::string name;
  std::string state;
  std::string reason;
};

nlohmann::json partition_json(const proto::PartitionInfo& p) {
  return {{"name", p.name},
          {"state", p.state},
          {"default", p.is_default},
          {"policy", p.policy},
          {"own_policy", p.own_policy},
          {"max_time_s", p.max_time_s},
          {"default_time_s", p.default_time_s},
          {"max_nodes", p.max_nodes},
          {"users", p.users},
          {"groups", p.groups},
          {"nodes", p.nodes},
          {"nodes_idle", p.nodes_idle},
          {"pending", p.pending},
          {"running", p.running}};
}

}  // namespace

bool partitions_configured() {
  // A schedd from before partitions does not know the request: none then.
  try {
    return client()
        .call<proto::PartitionList>(proto::type::kPartitionList, proto::Empty{})
        .configured;
  } catch (const std::exception&) {
    return false;
  }
}

void add_partition_command(CLI::App& app) {
  auto args = std::make_shared<PartitionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "partition", "List the partitions (like sinfo's summary), or set one's state (admins)");
  cmd->require_subcommand(0, 1);
  cmd->add_flag("--json", args->json, "Print {\"partitions\": [...]} as JSON");
  cmd->add_option("-p,--partition", args->only, "List this partition alone");
  cmd->callback([cmd, args] {
    if (!cmd->get_subcommands().empty()) return;
    run_command([&] {
      auto list = client().call<proto::PartitionList>(proto::type::kPartitionList, proto::Empty{});
      if (!args->only.empty()) {
        std::erase_if(list.partitions, [&](const auto& p) { return p.name != args->only; });
        if (list.partitions.empty()) throw std::runtime_error("no partition named " + args->only);
      }
      if (args->json) {
        nlohmann::json out = {{"configured", list.configured},
                              {"partitions", nlohmann::json::array()}};
        for (const auto& p : list.partitions) out["partitions"].push_back(partition_json(p));
        std::cout << out.dump(2) << "\n";
        return;
      }
      std::vector<PartitionRow> rows;
      for (const auto& p : list.partitions) {
        rows.push_back({p.name, p.is_default, p.state, p.policy, p.own_policy, p.max_time_s,
                        p.max_nodes, p.nodes, p.nodes_idle, p.pending, p.running, p.users,
                        p.groups});
      }
      std::cout << render_partitions(rows);
    });
  });
  CLI::App* set = cmd->add_subcommand(
      "set",
      "Set a partition's state: up, drain (takes no new jobs, runs and starts what it has) "
      "or down (takes and starts nothing)");
  set->add_option("NAME", args->name, "The partition")->required();
  set->add_option("STATE", args->state, "up, drain or down")->required();
  set->add_option("--reason", args->reason, "Why, for people (in the partition.state event)");
  set->callback([args] {
    run_command([&] {
      proto::PartitionUpdate update;
      update.name = args->name;
      update.state = args->state;
      if (!args->reason.empty()) update.reason = args->reason;
      client().call<proto::Empty>(proto::type::kPartitionUpdate, update);
    });
  });
}

}  // namespace sched::cli
