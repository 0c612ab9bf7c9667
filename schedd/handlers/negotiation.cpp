// The negotiated partitions (issue 20 item 5): what `sched negotiation` shows.
#include "handlers/handlers.hpp"
#include "sched/proto/negotiation_info.hpp"
#include "sched/proto/text.hpp"

namespace sched::daemon::handlers {

void negotiation_info(const Message& m) {
  const auto query = m.body<proto::NegotiationQuery>();
  proto::NegotiationList list;
  for (const auto& n : m.daemon.negotiations) {
    if (query.partition && *query.partition != n->partition()) continue;
    list.partitions.push_back(n->info());
  }
  if (query.partition && list.partitions.empty()) {
    const bool exists = m.daemon.engine.partition_index(*query.partition).has_value();
    throw proto::ProtoError(
        proto::code::kNotFound,
        exists ? "partition " + proto::excerpt(*query.partition) + " is not negotiated"
               : "no partition " + proto::excerpt(*query.partition));
  }
  m.reply(list);
}

}  // namespace sched::daemon::handlers
