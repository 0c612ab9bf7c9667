// The scheduling policy: what runs, and a reload on request.
#include "handlers/handlers.hpp"
#include "sched/lua_policy.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::daemon::handlers {
namespace {

proto::PolicyInfoReply policy_of(const PolicyHost& policy) {
  proto::PolicyInfoReply info;
  if (const auto& current = policy.current()) info.name = current->name();
  info.path = policy.path();
  info.reloads = policy.reloads();
  info.failed_reloads = policy.failed_reloads();
  return info;
}

}  // namespace

void policy_info(const Message& m) {
  proto::PolicyInfoReply info = policy_of(m.daemon.policy);
  for (const auto& [key, value] : m.daemon.config.params) info.params[key] = param_text(value);
  m.reply(info);
}

void policy_reload(const Message& m) {
  if (auto error = m.daemon.policy.reload()) {
    throw proto::ProtoError(proto::code::kInvalid, *error);
  }
  m.reply(policy_of(m.daemon.policy));
}

}  // namespace sched::daemon::handlers
