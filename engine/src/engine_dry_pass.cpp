// Dry passes: a policy's pass checked against the live state, never
// enacted. The reload check needs only whether it failed; `sched policy
// check` shows what it would have done.
#include "sched/engine.hpp"

namespace sched {

DryPassReport Engine::dry_pass_report(Policy& policy, const std::string& partition) {
  // A partition's policy is tried on its own partition (issue 20 item 1).
  int index = -1;
  if (partitioned_ && !partition.empty()) index = partition_index(partition).value_or(-1);
  PassContext ctx(*this, PassReason::Manual, /*dry=*/true, index);
  DryPassReport report;
  report.failure = call_schedule(policy, ctx);
  if (report.failure) report.failure->time = clock_.now();
  report.actions = ctx.actions();
  report.refusals = ctx.refusals();
  return report;
}

std::optional<PolicyFailure> Engine::dry_pass(Policy& policy, const std::string& partition) {
  return dry_pass_report(policy, partition).failure;
}

}  // namespace sched
