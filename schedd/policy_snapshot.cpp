#include "policy_snapshot.hpp"

#include <algorithm>

#include "sched/convert/wire_convert.hpp"

namespace sched::daemon {

LiveSnapshot live_snapshot(const Engine& engine, const PolicyHost& policy, double window_s) {
  LiveSnapshot snapshot;
  snapshot.now = engine.now();
  for (const Node& node : engine.cluster().nodes()) {
    snapshot.nodes.push_back({node.name, node.cores, node.gpus, node.up, node.draining});
  }
  for (const Job* job : engine.running_jobs()) {
    auto names = convert::node_names(*job, engine.cluster());
    if (names.empty()) continue;  // holds nothing yet: nothing for a twin to place
    Job copy = *job;
    if (copy.start_time < 0) copy.start_time = snapshot.now;
    snapshot.running.push_back({std::move(copy), std::move(names)});
  }
  for (const Job* job : engine.pending_jobs()) snapshot.pending.push_back(*job);
  snapshot.arrival_window_s = window_s;
  const double since = snapshot.now - window_s;
  for (const auto& [id, job] : engine.jobs()) {
    if (job->submit_time >= since && job->submit_time <= snapshot.now) {
      snapshot.arrivals.push_back({id, job->submit_time, job->spec});
    }
  }
  std::sort(snapshot.arrivals.begin(), snapshot.arrivals.end(), [](const auto& a, const auto& b) {
    return a.time != b.time ? a.time < b.time : a.id < b.id;
  });
  const PowerView power = engine.power();
  snapshot.corridor_lower_w = power.lower_w;
  snapshot.corridor_upper_w = power.upper_w;
  if (const auto current = policy.current()) {
    snapshot.policy_name = current->name();
    snapshot.policy_path = current->path();
    for (const PolicySource& source : current->sources()) {
      snapshot.policy_files.push_back({source.name, source.text});
    }
  }
  for (const auto& [key, value] : policy.params()) {
    snapshot.policy_params.emplace_back(key, param_text(value));
  }
  return snapshot;
}

}  // namespace sched::daemon
