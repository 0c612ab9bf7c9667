// Partitions (issue 20 item 1): what `sched partition` lists, and an
// administrator's change of a partition's state.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

constexpr std::size_t kMaxReasonBytes = 256;

}  // namespace

void partition_list(const Message& m) {
  const Engine& engine = m.daemon.engine;
  const Cluster& cluster = engine.cluster();
  proto::PartitionList list;
  list.configured = engine.partitioned();
  const auto& partitions = engine.partitions();
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const PartitionSpec& spec = partitions[i].spec;
    proto::PartitionInfo info;
    info.name = spec.name;
    info.state = std::string(to_string(spec.state));
    info.is_default = spec.is_default;
    for (const Node& node : cluster.nodes()) {
      if (node.partition == static_cast<int>(i)) info.nodes.push_back(node.name);
    }
    info.nodes_idle = cluster.idle_count(static_cast<int>(i));
    if (const auto policy = engine.partition_policy(spec.name)) info.policy = policy->name();
    info.own_policy = partitions[i].policy != nullptr;
    info.max_time_s = spec.limits.max_time_s;
    info.default_time_s = spec.limits.default_time_s;
    info.max_nodes = spec.limits.max_nodes;
    info.users = spec.limits.users;
    info.groups = spec.limits.groups;
    list.partitions.push_back(std::move(info));
  }
  // Jobs by partition: one walk of the jobs the engine holds.
  for (const auto& [id, job] : engine.jobs()) {
    if (is_terminal(job->state) || job->partition < 0 ||
        static_cast<std::size_t>(job->partition) >= list.partitions.size()) {
      continue;
    }
    auto& info = list.partitions[static_cast<std::size_t>(job->partition)];
    ++(job->state == JobState::Pending ? info.pending : info.running);
  }
  m.reply(list);
}

void partition_update(const Message& m) {
  const auto body = m.body<proto::PartitionUpdate>();
  require_admin(m, "setting a partition's state");
  const auto state = parse_partition_state(body.state);
  if (!state) {
    throw proto::ProtoError(proto::code::kInvalid, "state must be up, drain or down, not '" +
                                                       proto::excerpt(body.state) + "'");
  }
  if (body.reason && (body.reason->size() > kMaxReasonBytes || !proto::valid_utf8(*body.reason))) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "reason: at most " + std::to_string(kMaxReasonBytes) +
                                " bytes of UTF-8 ('" + proto::excerpt(*body.reason) + "')");
  }
  const std::string why =
      body.reason.value_or(m.caller ? "set by " + m.caller->user : std::string("set by an admin"));
  if (const Status status = m.daemon.engine.set_partition_state(body.name, *state, why);
      !status.ok()) {
    throw_status(status);
  }
  m.reply(proto::Empty{});
}

}  // namespace sched::daemon::handlers
