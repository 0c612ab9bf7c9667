#include "sched/event.hpp"

#include <array>
#include <utility>

namespace sched {

std::string_view topic(EventType type) {
  static constexpr std::array<std::string_view, 33> topics = {
      "job.submitted",  "job.starting",     "job.started",     "job.adapting",   "job.resized",
      "job.completing", "job.requeued",     "job.completed",   "job.failed",     "job.cancelled",
      "job.timeout",    "job.reserved",     "job.request",     "job.held",       "job.released",
      "job.suspended",  "job.resumed",      "node.up",         "node.down",      "node.drain",
      "power.corridor", "power.violation",  "policy.reloaded", "policy.error",   "policy.reverted",
      "auth.denied",    "resize.requested", "resize.pending",  "resize.granted", "resize.refused",
      "resize.expired", "partition.state",  "sched.pass"};
  return topics[static_cast<std::size_t>(type)];
}

Event policy_error_event(const PolicyFailure& failure, std::string message) {
  Event event;
  event.type = EventType::PolicyError;
  event.code = std::string(to_string(failure.code));
  event.file = failure.file;
  event.line = failure.line;
  event.message = std::move(message);
  return event;
}

}  // namespace sched
