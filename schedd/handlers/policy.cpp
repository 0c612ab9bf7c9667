// The scheduling policy: what runs, and a reload on request.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "policy_info.hpp"
#include "sched/lua_policy.hpp"
#include "sched/proto/client_messages.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

// policy.info's body; policy.reload answers with the same (docs/protocol.md §4).
proto::PolicyInfoReply info_reply(const DaemonParts& daemon) {
  proto::PolicyInfoReply info = policy_info_reply(daemon.policy);
  for (const auto& [key, value] : daemon.config.params) info.params[key] = param_text(value);
  return info;
}

}  // namespace

void policy_info(const Message& m) { m.reply(info_reply(m.daemon)); }

void policy_reload(const Message& m) {
  require_admin(m, "reloading the policy");
  if (const Status status = m.daemon.policy.reload(); !status.ok()) throw_status(status);
  m.reply(info_reply(m.daemon));
}

}  // namespace sched::daemon::handlers
