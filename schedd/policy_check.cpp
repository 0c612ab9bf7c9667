#include "policy_check.hpp"

#include "policy_info.hpp"

namespace sched::daemon {

proto::PolicyCheckReply policy_check_reply(const PolicyCandidate& candidate,
                                           const std::string& path, const Engine& engine) {
  proto::PolicyCheckReply reply;
  reply.path = path;
  if (candidate.policy) reply.name = candidate.policy->name();
  reply.ok = !candidate.failure;
  if (candidate.failure) reply.failure = failure_info(*candidate.failure);
  for (const PolicySource& source : candidate.sources) reply.files.push_back(source.path);
  for (const Action& action : candidate.dry.actions) {
    proto::PolicyActionInfo info;
    info.action = std::string(to_string(action.type));
    info.job = static_cast<std::uint64_t>(action.job);
    info.nodes = action.nodes;
    if (action.type == Action::Type::Expand || action.type == Action::Type::Shrink) {
      if (const Job* job = engine.find_job(action.job)) info.from_nodes = job->size();
    }
    if (action.type == Action::Type::Reserve) info.time = action.time;
    if (action.type == Action::Type::Preempt) {
      info.mode = action.mode == PreemptMode::Requeue ? "requeue" : "cancel";
    }
    reply.actions.push_back(std::move(info));
  }
  for (const Refusal& refusal : candidate.dry.refusals) {
    reply.refusals.push_back(proto::PolicyRefusalInfo{std::string(to_string(refusal.code)),
                                                      static_cast<std::uint64_t>(refusal.job),
                                                      refusal.message()});
  }
  return reply;
}

}  // namespace sched::daemon
