// The record of everything that happens in the engine. Every job state
// change is one event; so are node, power and policy happenings. The daemon
// publishes events on its PUB socket and journals them; the simulator feeds
// them to its reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/job.hpp"

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
  JobReserved,    // a policy's ctx:reserve changed the expected start
  JobRequest,     // an evolving job asks to grow or shrink
  NodeUp,
  NodeDown,
  NodeDrain,
  PowerCorridor,
  PowerViolation,
  PolicyReloaded,
  PolicyError,
  SchedPass,
};

// The topic of an event: "job.started", "policy.error", ...
std::string_view topic(EventType type);

struct Event {
  std::uint64_t seq = 0;  // 1, 2, ... in the order events happened
  double time = 0;
  EventType type = EventType::SchedPass;
  JobId job = 0;  // 0 when the event is not about a job
  JobState from = JobState::Pending;
  JobState to = JobState::Pending;
  int nodes = 0;        // job size after the event, or a node count
  int prev_nodes = 0;   // job size before a resize
  double value = 0;     // event-specific: watts, seconds, expected start
  double value2 = 0;    // event-specific: upper watts, ...
  std::string node;     // node events
  std::string message;  // people-readable detail (errors, reasons)
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

}  // namespace sched
