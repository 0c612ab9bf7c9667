#include "policy_info.hpp"

#include <string>

#include "sched/engine.hpp"

namespace sched::daemon {

proto::PolicyFailureInfo failure_info(const PolicyFailure& failure) {
  proto::PolicyFailureInfo info;
  info.time = failure.time;
  info.code = std::string(to_string(failure.code));
  info.message = failure.message;
  if (!failure.file.empty()) info.file = failure.file;
  if (failure.line > 0) info.line = failure.line;
  return info;
}

proto::PolicyRevertInfo revert_info(const PolicyRevert& revert) {
  proto::PolicyRevertInfo info;
  info.time = revert.time;
  info.from = revert.from;
  info.to = revert.to;
  info.failures = revert.failures;
  info.message = revert.message;
  return info;
}

proto::PolicyInfoReply policy_info_reply(const PolicyHost& host) {
  proto::PolicyInfoReply info;
  if (const auto& current = host.current()) info.name = current->name();
  info.path = host.path();
  info.reloads = host.reloads();
  info.failed_reloads = host.failed_reloads();
  if (const auto failure = host.last_failure()) {
    info.last_error = failure->message;
    info.last_failure = failure_info(*failure);
  }
  const Engine& engine = host.engine();
  const PassStats& stats = engine.stats();
  info.failed_passes = stats.failed;
  info.consecutive_failures = stats.consecutive_failed;
  info.revert_after_failures = engine.config().revert_after_failures;
  info.fallback = engine.has_fallback_policy();
  info.reverts = stats.reverts;
  if (stats.last_revert) info.last_revert = revert_info(*stats.last_revert);
  return info;
}

}  // namespace sched::daemon
