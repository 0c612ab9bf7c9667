// The body of schedd's policy.info and policy.reload replies (docs/protocol.md
// §4), from the policy host: what runs, its reload counters, its last
// failure and how its live passes went (failures in a row, reverts). The
// handler adds what is the daemon's own (the parameters).
#pragma once

#include "sched/engine.hpp"
#include "sched/policy_host.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::daemon {

proto::PolicyInfoReply policy_info_reply(const PolicyHost& host);

// A policy failure as policy.info's last_failure.
proto::PolicyFailureInfo failure_info(const PolicyFailure& failure);
// The engine's last revert as policy.info's last_revert.
proto::PolicyRevertInfo revert_info(const PolicyRevert& revert);

}  // namespace sched::daemon
