#include "sched/decision.hpp"

#include <array>

namespace sched {

std::string_view to_string(RefusalCode code) {
  static constexpr std::array<std::string_view, kRefusalCodeCount> names = {
      "unknown_job", "not_pending", "not_running",   "over_allocation", "below_min",
      "above_max",   "constraint",  "adapting",      "mixed_resize",    "leader_node",
      "rigid_job",   "not_larger",  "not_smaller",   "already_acted",   "not_requested",
      "resize_held", "placement",   "not_suspended", "bad_argument",    "partition",
      "core_busy",   "cores"};
  return names[static_cast<std::size_t>(code)];
}

std::string_view to_string(Action::Type type) {
  switch (type) {
    case Action::Type::Start:
      return "start";
    case Action::Type::Expand:
      return "expand";
    case Action::Type::Shrink:
      return "shrink";
    case Action::Type::RequestPerf:
      return "request_perf";
    case Action::Type::Preempt:
      return "preempt";
    case Action::Type::Reserve:
      return "reserve";
    case Action::Type::Suspend:
      return "suspend";
    case Action::Type::Resume:
      return "resume";
  }
  return "unknown";
}

std::string Refusal::message() const {
  std::string text(to_string(code));
  text += ": job " + std::to_string(job);
  switch (code) {
    case RefusalCode::OverAllocation:
      text += " wants " + std::to_string(want) + " nodes, " + std::to_string(have) + " idle";
      break;
    case RefusalCode::BelowMin:
      text += " size " + std::to_string(want) + " is below min_nodes " + std::to_string(have);
      break;
    case RefusalCode::AboveMax:
      text += " size " + std::to_string(want) + " is above max_nodes " + std::to_string(have);
      break;
    case RefusalCode::NotLarger:
    case RefusalCode::NotSmaller:
      text += " target " + std::to_string(want) + ", current size " + std::to_string(have);
      break;
    case RefusalCode::Constraint:
      text += " size " + std::to_string(want) + " is not allowed";
      break;
    case RefusalCode::Cores:
      text += " wants " + std::to_string(want) + " cores, " + std::to_string(have) + " free";
      break;
    default:
      break;
  }
  if (!detail.empty()) text += " (" + detail + ")";
  return text;
}

}  // namespace sched
