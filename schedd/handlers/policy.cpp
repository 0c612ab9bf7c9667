// The scheduling policy: what runs, and a reload on request.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "policy_info.hpp"
#include "sched/lua_policy.hpp"
#include "sched/proto/client_messages.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {

void policy_info(const Message& m) {
  proto::PolicyInfoReply info = policy_info_reply(m.daemon.policy);
  for (const auto& [key, value] : m.daemon.config.params) info.params[key] = param_text(value);
  m.reply(info);
}

void policy_reload(const Message& m) {
  require_admin(m, "reloading the policy");
  if (const Status status = m.daemon.policy.reload(); !status.ok()) throw_status(status);
  m.reply(policy_info_reply(m.daemon.policy));
}

}  // namespace sched::daemon::handlers
