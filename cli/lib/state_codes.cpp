#include "state_codes.hpp"

#include <array>
#include <cctype>
#include <string>

namespace sched::cli {
namespace {

// In JobState order.
constexpr std::array<std::string_view, 10> kCodes = {"PD", "CF", "R",  "AD", "CG",
                                                     "CD", "F",  "CA", "TO", "S"};

}  // namespace

std::string_view state_code(JobState state) { return kCodes[static_cast<std::size_t>(state)]; }

std::optional<JobState> parse_state_filter(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::size_t i = 0; i < kCodes.size(); ++i) {
    if (kCodes[i] == upper) return static_cast<JobState>(i);
  }
  return parse_job_state(upper);
}

std::string_view to_sinfo(NodeState state) {
  switch (state) {
    case NodeState::Idle:
      return "idle";
    case NodeState::Mixed:
      return "mix";
    case NodeState::Allocated:
      return "alloc";
    case NodeState::Draining:
      return "drng";
    case NodeState::Drained:
      return "drain";
    case NodeState::Down:
      return "down";
  }
  return "unknown";
}

NodeState classify_node(bool up, bool draining, int cpus_allocated, int cpus) {
  if (!up) return NodeState::Down;
  if (draining) return cpus_allocated > 0 ? NodeState::Draining : NodeState::Drained;
  if (cpus_allocated <= 0) return NodeState::Idle;
  return cpus_allocated >= cpus ? NodeState::Allocated : NodeState::Mixed;
}

}  // namespace sched::cli
