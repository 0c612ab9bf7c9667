// A drain under a malleable job (issue 17 item 4): the job is shrunk off the
// draining nodes when its constraints allow, instead of holding them until
// it ends. Rigid, moldable and evolving jobs keep their nodes (an evolving
// job's size is the application's choice).
#include <algorithm>

#include "sched/constraints.hpp"
#include "sched/engine.hpp"
#include "sched/shrink_choice.hpp"

namespace sched {
namespace {

std::string names_of(const Cluster& cluster, const std::vector<NodeIndex>& nodes) {
  std::string text;
  for (NodeIndex node : nodes) text += (text.empty() ? "" : ",") + cluster.node(node).name;
  return text;
}

}  // namespace

Engine::DrainShrink Engine::plan_drain_shrink(const Job& job) const {
  DrainShrink plan;
  const std::string who = "job " + std::to_string(job.id);
  if (job.allocation.empty()) return plan;
  if (cluster_.node(job.allocation.front()).draining) {
    plan.why_not = who + " keeps its leader node until it ends: the leader never leaves";
    return plan;
  }
  const std::vector<NodeIndex> off = drained_nodes_of(cluster_, job);
  if (off.empty()) return plan;
  if (job.state == JobState::Adapting) {
    plan.later = true;
    plan.why_not =
        who + " adapts: it is shrunk off " + names_of(cluster_, off) + " once the adaptation ends";
    return plan;
  }
  if (job.state != JobState::Running) return plan;
  if (job.run->resize_held_until > clock_.now()) {
    plan.later = true;
    plan.why_not = who + "'s last adaptation was rolled back: it is shrunk off " +
                   names_of(cluster_, off) +
                   " from t=" + std::to_string(job.run->resize_held_until);
    return plan;
  }
  const int count = static_cast<int>(off.size());
  const auto to = drain_shrink_size(job, job.size(), count);
  if (!to) {
    plan.why_not = who + " keeps " + names_of(cluster_, off) +
                   " until it ends: no size of at most " + std::to_string(job.size() - count) +
                   " nodes is allowed (min_nodes " + std::to_string(job.spec.min_nodes) +
                   ", constraint " + std::string(to_string(job.spec.constraint)) + ")";
    return plan;
  }
  plan.to = *to;
  plan.leaving = off;
  // A constraint may ask for more to leave than the drained nodes: the
  // default choice adds the newest.
  const std::vector<NodeIndex> more =
      default_shrink_nodes(cluster_, job, job.size() - *to - count, off);
  plan.leaving.insert(plan.leaving.end(), more.begin(), more.end());
  return plan;
}

void Engine::shrink_off_drained(Job& job, bool announce) {
  // A job of an invasive partition keeps its cores there until it ends.
  if (job.spec.kind != JobKind::Malleable || !job.run->cores.empty()) return;
  const DrainShrink plan = plan_drain_shrink(job);
  if (plan.later) {
    drain_waits_.insert(job.id);
    return;
  }
  drain_waits_.erase(job.id);
  if (plan.to > 0) {
    const std::vector<NodeIndex> drained = drained_nodes_of(cluster_, job);
    enact_resize(job, plan.to, plan.leaving, "off draining " + names_of(cluster_, drained));
    return;
  }
  if (announce && !plan.why_not.empty()) {
    Event event;
    event.type = EventType::NodeDrain;
    event.node = cluster_.node(job.allocation.front()).name;
    for (NodeIndex node : job.allocation) {
      if (cluster_.node(node).draining) {
        event.node = cluster_.node(node).name;
        break;
      }
    }
    event.message = plan.why_not;
    emit(std::move(event));
  }
}

}  // namespace sched
