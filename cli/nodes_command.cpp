// `sched nodes`: the nodes as sinfo shows them (a line per state, or with -N
// a line per node), and `sched nodes drain|resume NAME` as scontrol update.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "listings.hpp"
#include "nodelist.hpp"
#include "pages.hpp"

namespace sched::cli {
namespace {

NodeState sinfo_state(const std::string& state) {
  if (state == "idle") return NodeState::Idle;
  if (state == "alloc") return NodeState::Allocated;
  if (state == "mixed") return NodeState::Mixed;  // some cores of an invasive partition's node
  if (state == "drain") return NodeState::Drained;
  if (state == "draining") return NodeState::Draining;
  // "down", or a state this client does not know: either way not usable.
  return NodeState::Down;
}

// n2 before n10, as people count; digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      // Without leading zeros the longer run is the larger number.
      std::string_view x(a.data() + i, ei - i), y(b.data() + j, ej - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// As many as schedd gives in one page (it bounds pages by bytes too).
constexpr std::int64_t kNodesPage = 10000;

// Sorted by name as sinfo does; schedd lists nodes in registration order.
std::vector<NodeRow> node_rows(std::vector<proto::NodeInfo> nodes) {
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& x, const auto& y) { return natural_less(x.name, y.name); });
  std::vector<NodeRow> rows;
  for (const auto& node : nodes) {
    rows.push_back({node.name, sinfo_state(node.state), node.cores, node.jobs,
                    node.containment.value_or(""), node.run_as.value_or(""),
                    node.partition.value_or(""), node.cores_alloc});
  }
  return rows;
}

struct NodesArgs {
  bool json = false;
  bool long_format = false;
  std::vector<std::string> states;
  std::string nodes;
  bool isolation = false;
  std::string name;
  std::string reason;
  std::string partition;  // -p: only this partition's nodes (issue 20)
};

// sinfo -t's names (and schedd's own "draining") as schedd names them.
std::string schedd_state(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name == "idle" || name == "alloc" || name == "drain" || name == "down") return name;
  if (name == "drng" || name == "draining") return "draining";
  if (name == "mix" || name == "mixed") return "mixed";  // sinfo's spelling, and ours
  throw std::runtime_error("unknown node state '" + name +
                           "' (idle, alloc, mix, drng, drain, down)");
}

proto::NodesQuery nodes_query(const NodesArgs& args) {
  proto::NodesQuery query;
  if (!args.states.empty()) {
    query.states.emplace();
    for (const std::string& state : args.states) query.states->push_back(schedd_state(state));
  }
  if (!args.nodes.empty()) {
    try {
      query.names = expand_nodelist(args.nodes);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("bad node list '" + args.nodes + "': " + e.what());
    }
  }
  query.limit = kNodesPage;
  return query;
}

void update_node(const std::string& name, const std::string& state, const std::string& reason) {
  proto::NodeUpdate update;
  update.name = name;
  update.state = state;
  if (!reason.empty()) update.reason = reason;
  client().call<proto::Empty>(proto::type::kNodeUpdate, update);
}

}  // namespace

void add_nodes_command(CLI::App& app) {
  auto args = std::make_shared<NodesArgs>();
  CLI::App* nodes = app.add_subcommand("nodes", "List the nodes (like sinfo), drain or resume one");
  nodes->require_subcommand(0, 1);
  nodes->add_flag("--json", args->json, "Print {\"nodes\": [...]} as JSON");
  nodes->add_flag("-N,--long", args->long_format, "One line per node (like sinfo -N)");
  nodes
      ->add_option("-t,--states", args->states,
                   "Only nodes in these states: idle,alloc,mix,drng,drain,down")
      ->delimiter(',');
  nodes->add_option("-n,--nodes", args->nodes, "Only these nodes (a host list: n[1-4],gpu1)");
  nodes->add_option("-p,--partition", args->partition, "Only this partition's nodes");
  nodes->add_flag("--isolation", args->isolation,
                  "One line per node with how it contains jobs (cgroup2, cgroup1, none) and whom "
                  "it runs them as");
  nodes->callback([nodes, args] {
    // The listing is the command without a subcommand.
    if (!nodes->get_subcommands().empty()) return;
    run_command([&] {
      // Every page first: the lines are sorted by name.
      proto::NodeList list;
      for_each_page<proto::NodeList>(
          proto::type::kNodesQuery, nodes_query(*args), [&](proto::NodeList page) {
            for (auto& node : page.nodes) {
              if (!args->partition.empty() && node.partition.value_or("") != args->partition) {
                continue;
              }
              list.nodes.push_back(std::move(node));
            }
            return true;
          });
      if (args->json) {
        nlohmann::json out = {{"nodes", nlohmann::json::array()}};
        for (const auto& node : list.nodes) out["nodes"].push_back(to_json(node));
        std::cout << out.dump(2) << "\n";
        return;
      }
      const auto rows = node_rows(list.nodes);
      // The PARTITION column where partitions are configured (issue 20 item 1).
      const bool partitions = partitions_configured();
      std::cout << (args->long_format || args->isolation
                        ? render_nodes(rows, args->isolation, partitions)
                        : render_node_summary(rows, partitions));
    });
  });

  CLI::App* drain = nodes->add_subcommand(
      "drain", "Take a node out of scheduling; its job (if any) runs to its end");
  drain->add_option("NAME", args->name, "The node")->required();
  drain->add_option("--reason", args->reason, "Why, for people");
  drain->callback([args] { run_command([&] { update_node(args->name, "drain", args->reason); }); });

  CLI::App* resume = nodes->add_subcommand("resume", "Give a drained node back to scheduling");
  resume->add_option("NAME", args->name, "The node")->required();
  resume->callback([args] { run_command([&] { update_node(args->name, "resume", ""); }); });
}

}  // namespace sched::cli
