// The body of schedd's policy.info and policy.reload replies (docs/protocol.md
// §4), from the policy host: what runs, its reload counters and its last
// failure. The handler adds what is the daemon's own (the parameters).
#pragma once

#include "sched/policy_host.hpp"
#include "sched/proto/messages.hpp"

namespace sched::daemon {

proto::PolicyInfoReply policy_info_reply(const PolicyHost& host);

// A policy failure as policy.info's last_failure.
proto::PolicyFailureInfo failure_info(const PolicyFailure& failure);

}  // namespace sched::daemon
