#include "sched/event.hpp"

#include <array>

namespace sched {

std::string_view topic(EventType type) {
  static constexpr std::array<std::string_view, 21> topics = {
      "job.submitted",   "job.starting",   "job.started",     "job.adapting",
      "job.resized",     "job.completing", "job.requeued",    "job.completed",
      "job.failed",      "job.cancelled",  "job.timeout",     "job.reserved",    "job.request",
      "node.up",         "node.down",      "node.drain",      "power.corridor",
      "power.violation", "policy.reloaded", "policy.error",   "sched.pass"};
  return topics[static_cast<std::size_t>(type)];
}

}  // namespace sched
