#include "negotiation_policy.hpp"

#include "sched/pass_context.hpp"

namespace sched::daemon {

std::optional<PolicyFailure> NegotiationPolicy::schedule(PassContext& ctx) {
  // A dry pass (a reload check of another policy) must change nothing here.
  if (ctx.dry()) return std::nullopt;
  ++passes_;
  offered_.clear();
  for (const Job* job : ctx.pending()) {
    offered_.push_back(
        {job->id, std::max(1, job->spec.layout->cores), job->submit_time, job->spec.urgent});
  }
  const auto outcome = [this](JobId job, const Verdict& verdict, Kind kind) {
    outcomes_.push_back(
        {job, verdict ? std::optional<std::string>(verdict->message()) : std::nullopt, kind});
  };
  // Suspensions first: an urgent job's start takes the cores they free.
  for (JobId job : std::exchange(suspends_, {})) outcome(job, ctx.suspend(job), Kind::Suspend);
  for (Start& start : std::exchange(starts_, {})) {
    // The engine checks it as any start: the job pending in this partition,
    // the cores up, free and as many as the job needs.
    outcome(start.job, ctx.start(start.job, start.cores), Kind::Start);
  }
  // Last, so that no start of this pass can have wanted their cores.
  for (JobId job : std::exchange(resumes_, {})) outcome(job, ctx.resume(job), Kind::Resume);
  return std::nullopt;
}

}  // namespace sched::daemon
