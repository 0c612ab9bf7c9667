// The body of schedd's policy.check reply (docs/protocol.md §4): what a
// candidate policy would do, from PolicyHost::check's dry pass.
#pragma once

#include <string>

#include "sched/engine.hpp"
#include "sched/policy_host.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::daemon {

// `path` is the file checked; the engine gives expand/shrink their size now.
proto::PolicyCheckReply policy_check_reply(const PolicyCandidate& candidate,
                                           const std::string& path, const Engine& engine);

}  // namespace sched::daemon
