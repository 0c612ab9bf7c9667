// The agents' side of an adaptation (docs/protocol.md §8): ready, complete,
// failed. The adaptation's state is the enactor's (schedd/adaptations.cpp).
#include "handlers/handlers.hpp"
#include "sched/proto/agent_messages.hpp"

namespace sched::daemon::handlers {
namespace {

using Step = std::optional<std::string> (Adaptations::*)(const proto::AdaptReport&);

// A report the adaptation refuses (stale, or from the wrong node) is a conflict.
void report(const Message& m, Step step) {
  const auto body = m.body<proto::AdaptReport>();
  m.from_node(body.node);
  if (auto error = (m.daemon.enactor.adaptations().*step)(body)) {
    throw proto::ProtoError(proto::code::kConflict, *error);
  }
}

}  // namespace

void adapt_ready(const Message& m) {
  const auto body = m.body<proto::AdaptReady>();
  m.from_node(body.node);
  if (auto error = m.daemon.enactor.adaptations().on_ready(body)) {
    throw proto::ProtoError(proto::code::kConflict, *error);
  }
}

void adapt_complete(const Message& m) { report(m, &Adaptations::on_complete); }

void adapt_failed(const Message& m) { report(m, &Adaptations::on_failed); }

}  // namespace sched::daemon::handlers
