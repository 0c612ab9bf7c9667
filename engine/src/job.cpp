#include "sched/job.hpp"

#include <array>

#include "sched/constraints.hpp"
#include "sched/placement.hpp"

namespace sched {
namespace {

constexpr std::array<std::string_view, 4> kKindNames = {"rigid", "moldable", "malleable",
                                                        "evolving"};
constexpr std::array<std::string_view, 10> kStateNames = {
    "PENDING",   "STARTING", "RUNNING",   "ADAPTING", "COMPLETING",
    "COMPLETED", "FAILED",   "CANCELLED", "TIMEOUT",  "SUSPENDED"};
constexpr std::array<std::string_view, 5> kConstraintNames = {"none", "pof2", "even", "odd",
                                                              "ncube"};

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names,
                               std::string_view text) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(JobKind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }
std::string_view to_string(JobState state) { return kStateNames[static_cast<std::size_t>(state)]; }
std::string_view to_string(NodeConstraint constraint) {
  return kConstraintNames[static_cast<std::size_t>(constraint)];
}

std::optional<JobKind> parse_job_kind(std::string_view text) {
  return parse_name<JobKind>(kKindNames, text);
}
std::optional<JobState> parse_job_state(std::string_view text) {
  return parse_name<JobState>(kStateNames, text);
}
std::optional<NodeConstraint> parse_node_constraint(std::string_view text) {
  if (text.empty()) return NodeConstraint::None;
  return parse_name<NodeConstraint>(kConstraintNames, text);
}

bool is_terminal(JobState state) {
  switch (state) {
    case JobState::Completed:
    case JobState::Failed:
    case JobState::Cancelled:
    case JobState::Timeout:
      return true;
    default:
      return false;
  }
}

bool is_valid_transition(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::Pending:
      return to == S::Starting || to == S::Cancelled;
    case S::Starting:  // a launch that fails or is cancelled goes through COMPLETING
      return to == S::Running || to == S::Completing || to == S::Pending;
    case S::Running:
      return to == S::Adapting || to == S::Completing || to == S::Suspended;
    case S::Suspended:  // resumed, or stopped (cancel, requeue, a lost node) while frozen
      return to == S::Running || to == S::Completing;
    case S::Adapting:
      return to == S::Running || to == S::Completing;
    case S::Completing:  // PENDING: requeued
      return is_terminal(to) || to == S::Pending;
    default:
      return false;  // terminal states are final
  }
}

bool is_resizable(JobKind kind) { return kind == JobKind::Malleable || kind == JobKind::Evolving; }

std::string_view waiting_reason(const Job& job) {
  if (job.state != JobState::Pending) return {};
  if (job.hold == HoldKind::Admin) return "JobHeldAdmin";
  if (job.hold == HoldKind::User) return "JobHeldUser";
  if (job.dependency == DependencyState::Never) return "DependencyNeverSatisfied";
  if (job.dependency == DependencyState::Waiting) return "Dependency";
  if (job.before_begin) return "BeginTime";
  if (job.array_throttled) return "JobArrayTaskLimit";
  return {};
}

double Job::est_end() const {
  if (start_time < 0 || spec.walltime <= 0) return -1;
  return start_time + spec.walltime + run->limit_extension;
}

std::optional<std::string> normalize_spec(JobSpec& spec) {
  // A reader that wrote a rare field's default leaves no box behind (issue 15).
  spec.extra.reset_if_default();
  spec.layout.reset_if_default();
  if (spec.nodes < 1) return "nodes must be at least 1";
  if (spec.tasks_per_node < 1) return "tasks_per_node must be at least 1";
  if (spec.layout->ntasks < 0) return "ntasks must not be negative";
  if (spec.layout->cpus_per_task < 1) return "cpus_per_task must be at least 1";
  if (spec.layout->nodes_from_tasks && (spec.kind != JobKind::Rigid || spec.layout->ntasks < 1)) {
    return "only a rigid job with --ntasks gets its nodes from its tasks";
  }
  if (spec.walltime < 0) return "walltime must not be negative";
  if (spec.power_min_w < 0 || spec.power_max_w < 0) return "power estimates must not be negative";
  if (spec.extra->begin_time < 0) return "begin_time must not be negative";
  // Slurm's range for --nice.
  if (spec.nice > 2147483645 || spec.nice < -2147483645) {
    return "Invalid nice value, must be between -2147483645 and 2147483645";
  }
  if (spec.power_max_w > 0 && spec.power_min_w > spec.power_max_w) {
    return "power_min_w must not exceed power_max_w";
  }
  if (spec.extra->gpus_per_node < 0) return "gpus_per_node must not be negative";
  if (has_placement(spec) && is_resizable(spec.kind)) {
    // A resize takes whatever nodes are free; it would not keep to them.
    return "--nodelist, --exclude and --gres are for rigid and moldable jobs";
  }
  if (static_cast<int>(spec.extra->nodelist.size()) > spec.nodes) {
    return "--nodelist names " + std::to_string(spec.extra->nodelist.size()) +
           " nodes; the job asks for " + std::to_string(spec.nodes);
  }
  if (spec.layout->ntasks > 0 &&
      spec.layout->ntasks < (spec.kind == JobKind::Rigid ? spec.nodes : spec.min_nodes)) {
    return "--ntasks=" + std::to_string(spec.layout->ntasks) + " is fewer tasks than the job's " +
           std::to_string(spec.kind == JobKind::Rigid ? spec.nodes : spec.min_nodes) +
           " nodes (every node runs at least one)";
  }
  if (spec.kind == JobKind::Rigid) {
    if ((spec.min_nodes != 0 && spec.min_nodes != spec.nodes) ||
        (spec.max_nodes != 0 && spec.max_nodes != spec.nodes)) {
      return "a rigid job has min_nodes = max_nodes = nodes";
    }
    spec.min_nodes = spec.max_nodes = spec.nodes;
    return std::nullopt;
  }
  if (spec.min_nodes == 0) spec.min_nodes = spec.kind == JobKind::Moldable ? 1 : spec.nodes;
  if (spec.max_nodes == 0) spec.max_nodes = spec.nodes;
  if (spec.min_nodes < 1) return "min_nodes must be at least 1";
  if (spec.min_nodes > spec.max_nodes) return "min_nodes must not exceed max_nodes";
  if (spec.nodes < spec.min_nodes || spec.nodes > spec.max_nodes) {
    return "nodes must lie within [min_nodes, max_nodes]";
  }
  if (allowed_sizes(spec.constraint, spec.min_nodes, spec.max_nodes).empty()) {
    return "no size within [min_nodes, max_nodes] satisfies node constraint " +
           std::string(to_string(spec.constraint));
  }
  if (spec.kind != JobKind::Moldable && !is_allowed_size(spec.constraint, spec.nodes)) {
    return "nodes (" + std::to_string(spec.nodes) + ") breaks node constraint " +
           std::string(to_string(spec.constraint));
  }
  return std::nullopt;
}

}  // namespace sched
