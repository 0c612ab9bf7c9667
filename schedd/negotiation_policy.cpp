#include "negotiation_policy.hpp"

#include "sched/pass_context.hpp"

namespace sched::daemon {

std::optional<PolicyFailure> NegotiationPolicy::schedule(PassContext& ctx) {
  // A dry pass (a reload check of another policy) must change nothing here.
  if (ctx.dry()) return std::nullopt;
  ++passes_;
  offered_.clear();
  for (const Job* job : ctx.pending()) {
    offered_.push_back({job->id, std::max(1, job->spec.cores), job->submit_time, job->spec.urgent});
  }
  for (Start& start : std::exchange(starts_, {})) {
    // The engine checks it as any start: the job pending in this partition,
    // the cores up, free and as many as the job needs.
    Verdict verdict = ctx.start(start.job, start.cores);
    outcomes_.push_back(
        {start.job, verdict ? std::optional<std::string>(verdict->message()) : std::nullopt});
  }
  return std::nullopt;
}

}  // namespace sched::daemon
