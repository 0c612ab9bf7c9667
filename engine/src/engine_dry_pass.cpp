// A dry pass that reports what it would have done: `sched policy check`
// shows it before a policy is deployed.
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

}  // namespace sched
