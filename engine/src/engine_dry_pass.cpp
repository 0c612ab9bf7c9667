// Dry passes: a policy's pass checked against the live state, never
// enacted. The reload check needs only whether it failed; `sched policy
// check` shows what it would have done.
#include "sched/engine.hpp"

namespace sched {

DryPassReport Engine::dry_pass_report(Policy& policy) {
  PassContext ctx(*this, PassReason::Manual, /*dry=*/true);
  DryPassReport report;
  report.failure = call_schedule(policy, ctx);
  if (report.failure) report.failure->time = clock_.now();
  report.actions = ctx.actions();
  report.refusals = ctx.refusals();
  return report;
}

std::optional<PolicyFailure> Engine::dry_pass(Policy& policy) {
  return dry_pass_report(policy).failure;
}

}  // namespace sched
