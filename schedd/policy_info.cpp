#include "policy_info.hpp"

#include <string>

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
  return info;
}

}  // namespace sched::daemon
