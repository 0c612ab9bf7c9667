// The record of everything that happens in the engine. Every job state
// change is one event; so are node, power and policy happenings. The daemon
// publishes events on its PUB socket and journals them; the simulator feeds
// them to its reports. docs/protocol.md §9 is the specification of each
// topic's fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/job.hpp"
#include "sched/policy_failure.hpp"

namespace sched {

enum class EventType {
  JobSubmitted,   // → PENDING (new)
  JobStarting,    // PENDING → STARTING
  JobStarted,     // STARTING → RUNNING
  JobAdapting,    // RUNNING → ADAPTING
  JobResized,     // ADAPTING → RUNNING with a new allocation
  JobCompleting,  // → COMPLETING
  JobRequeued,    // COMPLETING → PENDING
  JobCompleted,
  JobFailed,
  JobCancelled,
  JobTimeout,
  JobReserved,   // a policy's ctx:reserve changed the expected start
  JobRequest,    // an evolving job asks to grow or shrink
  JobHeld,       // PENDING, held back (sched hold, --hold)
  JobReleased,   // PENDING, its hold lifted (sched release)
  JobSuspended,  // RUNNING → SUSPENDED (a policy's ctx:suspend)
  JobResumed,    // SUSPENDED → RUNNING on its own nodes (ctx:resume)
  NodeUp,
  NodeDown,
  NodeDrain,
  PowerCorridor,
  PowerViolation,  // the draw left the corridor or came back (Engine::check_power)
  PolicyReloaded,
  PolicyError,
  PolicyReverted,  // the engine went back to the last good policy
  AuthDenied,      // schedd refused a peer: an unknown key, a node its key may not speak for
  // Issue 17 item 1: what became of an evolving job's live request (schedd's
  // record; job.request is the engine's): asked, waiting, granted (its
  // adaptation began), refused, expired (not granted in time, dropped).
  ResizeRequested,
  ResizePending,
  ResizeGranted,
  ResizeRefused,
  ResizeExpired,
  PartitionState,  // a partition's state was set (sched partition set; issue 20 item 1)
  SchedPass,       // keep last: the journal reads topics up to it
};

// The topic of an event: "job.started", "policy.error", ...
std::string_view topic(EventType type);

// One struct for every topic: a field that a topic does not have stays at its
// default (and is neither published nor journaled for it).
struct Event {
  std::uint64_t seq = 0;  // 1, 2, ... in the order events happened
  double time = 0;
  EventType type = EventType::SchedPass;

  // ---- job.*
  JobId job = 0;  // 0 when the event is not about a job
  JobState from = JobState::Pending;
  JobState to = JobState::Pending;
  // The job's size after the event (job.submitted: requested; job.request: asked).
  int nodes = 0;
  int prev_nodes = 0;         // its size before: job.adapting, job.resized, job.request
  double expected_start = 0;  // job.reserved: when the policy expects it to start

  // ---- node.*
  std::string node;

  // ---- power.corridor: the corridor set; power.violation: the corridor left
  double lower_w = 0;
  double upper_w = 0;
  double power_w = 0;  // power.violation: the cluster's draw

  // ---- sched.pass
  double pass_s = 0;   // how long the pass took (wall clock)
  int actions = 0;     // actions accepted and enacted
  std::string reason;  // why it ran: to_string(PassReason); auth.denied: the request's type;
                       // power.violation: above, below, inside or cleared

  // ---- policy.error: the PolicyFailure, when known; policy.reverted: the
  // last failure of the policy that was given up
  std::string code;  // to_string(PolicyFailureCode): "syntax", "runtime", ...
  std::string file;  // the script Lua named; "" when unknown
  int line = 0;      // 0 when unknown

  // ---- auth.denied about a client request: the caller refused (and, in
  // reason and code, the request's type and the error's code); resize.*:
  // the user who asked ("" for the application itself), code the refusal's
  // wire code, reason "application" or "user"
  std::string user;

  // ---- partition.state: the partition (its new state in `code`: up, drain,
  // down); policy.error, policy.reverted and sched.pass of a partition's own
  // pass (issue 20 item 1): the partition; "" otherwise
  std::string partition;

  std::string message;  // people-readable detail (errors, reasons)
};

// A policy.error event for `failure`; `message` says for people what failed
// and what the engine did about it.
Event policy_error_event(const PolicyFailure& failure, std::string message);

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

}  // namespace sched
