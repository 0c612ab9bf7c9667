#include "adaptations.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sched::daemon {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

WindowPlan plan_window(const StepLayout& layout, Resize::Op op,
                       const std::vector<std::string>& changed) {
  WindowPlan plan;
  for (const auto& [node, ranks] : layout) plan.old_size += static_cast<int>(ranks.size());
  for (const auto& [node, ranks] : layout) plan.involved.push_back(node);
  if (op == Resize::Op::Expand) {
    const int per_node = layout.empty() ? 1 : std::max<int>(1, layout.front().second.size());
    plan.layout = layout;
    int rank = plan.old_size;
    for (const std::string& node : changed) {
      std::vector<int> ranks;
      for (int k = 0; k < per_node; ++k) ranks.push_back(rank++);
      plan.layout.emplace_back(node, std::move(ranks));
      plan.involved.push_back(node);
    }
    plan.new_size = rank;
    for (int w = 0; w < plan.new_size; ++w) {
      plan.old_ranks.push_back(w < plan.old_size ? w : -1);
      plan.new_ranks.push_back(w);
    }
    return plan;
  }
  std::vector<bool> leaving(static_cast<std::size_t>(plan.old_size), false);
  for (const auto& [node, ranks] : layout) {
    if (!contains(changed, node)) continue;
    for (int r : ranks) leaving[static_cast<std::size_t>(r)] = true;
  }
  for (int w = 0; w < plan.old_size; ++w) {
    plan.old_ranks.push_back(w);
    plan.new_ranks.push_back(leaving[static_cast<std::size_t>(w)] ? -1 : plan.new_size++);
  }
  for (const auto& [node, ranks] : layout) {
    if (contains(changed, node)) continue;
    std::vector<int> renumbered;
    for (int r : ranks) renumbered.push_back(plan.new_ranks[static_cast<std::size_t>(r)]);
    plan.layout.emplace_back(node, std::move(renumbered));
  }
  return plan;
}

void Adaptations::begin(const Job& job, const Resize& resize,
                        const std::vector<std::string>& job_nodes,
                        const std::vector<std::string>& changed, double now,
                        std::optional<CoreChange> cores) {
  const JobId id = job.id;
  if (cores) {
    // Wider before its processes go on; narrower only once they committed.
    if (cores->expand) send_cores(id, cores->after);
    core_changes_[id] = *cores;
  }
  auto [step_id, step] = steps_.newest(id);
  if (!step) {
    // No step runs: nothing to tell, the next `sched run` uses the new nodes.
    done(id, true);
    return;
  }
  WindowPlan plan = plan_window(step->layout, resize.op, changed);
  if (plan.old_size == plan.new_size && !cores) {
    // A shrink of nodes the step does not use: its processes stay as they are.
    done(id, true);
    return;
  }
  Live live;
  proto::AdaptBegin& begin = live.begin;
  begin.job = id;
  begin.adaptation = ++last_id_;
  begin.step = step_id;
  begin.op = resize.op == Resize::Op::Expand ? "expand" : "shrink";
  begin.old_size = plan.old_size;
  begin.new_size = plan.new_size;
  begin.old_ranks = plan.old_ranks;
  begin.new_ranks = plan.new_ranks;
  begin.job_nodes = job_nodes;
  if (cores) {
    begin.core_ids = cores->after;
    begin.old_cores = cores->old_cores;
    begin.new_cores = cores->new_cores;
  }
  if (resize.op == Resize::Op::Expand) {
    begin.job_nodes.insert(begin.job_nodes.end(), changed.begin(), changed.end());
    live.added = changed;
  } else {
    std::erase_if(begin.job_nodes, [&](const std::string& n) { return contains(changed, n); });
  }
  live.involved = plan.involved;
  live.layout = std::move(plan.layout);
  live.endpoints.resize(plan.old_ranks.size());
  live.deadline = now + timeout_s_;
  // The program spawns the new processes itself (--mall-spawn=mpi): the
  // agents start none, and the window opens with the old ones.
  live.mpi_spawn = resize.op == Resize::Op::Expand && step->launch.mall_spawn.value_or("") == "mpi";
  if (live.mpi_spawn) {
    std::vector<std::string> hosts(plan.old_ranks.size());
    for (const auto& [node, ranks] : live.layout) {
      for (int r : ranks) hosts[static_cast<std::size_t>(r)] = node;
    }
    begin.mall_spawn = "mpi";
    begin.hosts = hosts;
    StepRecord::MpiExpansion expansion;
    expansion.adaptation = begin.adaptation;
    expansion.old_size = plan.old_size;
    expansion.new_size = plan.new_size;
    expansion.hosts.assign(hosts.begin() + plan.old_size, hosts.end());
    expansion.job_nodes = begin.job_nodes;
    step->expansion = std::move(expansion);
  }

  std::vector<std::string> step_nodes;
  for (const auto& [node, ranks] : live.layout) step_nodes.push_back(node);
  bool sent = true;
  for (const auto& [node, ranks] : live.layout) {
    if (!contains(live.involved, node)) continue;
    proto::AdaptBegin body = begin;
    if (contains(live.added, node) && !live.mpi_spawn) {
      proto::StepLaunch launch = step->launch;
      launch.step = step_id;
      launch.job_nodes = begin.job_nodes;
      launch.nodes = step_nodes;
      launch.ranks = ranks;
      launch.tasks = plan.new_size;
      if (cores) launch.core_ids = cores->after;  // its cores on the node it joins
      body.launch = std::move(launch);
    }
    sent = agents_.send(node, proto::type::kAdaptBegin, body) && sent;
  }
  // Nodes that leave a shrink are not in the new layout.
  for (const std::string& node : live.involved) {
    if (std::none_of(live.layout.begin(), live.layout.end(),
                     [&](const auto& entry) { return entry.first == node; })) {
      sent = agents_.send(node, proto::type::kAdaptBegin, begin) && sent;
    }
  }
  spdlog::info("job {}: adaptation {} ({} {} -> {} processes of step {}) begins", id,
               begin.adaptation, begin.op, begin.old_size, begin.new_size, step_id);
  live_[id] = std::move(live);
  if (!sent) end(id, "a node of the adaptation has no agent");
}

Adaptations::Live* Adaptations::find(JobId job, std::uint64_t adaptation, const std::string& node,
                                     std::optional<std::string>& error) {
  auto it = live_.find(job);
  if (it == live_.end() || it->second.begin.adaptation != adaptation) {
    error = "job " + std::to_string(job) + " has no adaptation " + std::to_string(adaptation) +
            " under way";
    return nullptr;
  }
  if (!contains(it->second.involved, node)) {
    error = "node " + node + " takes no part in adaptation " + std::to_string(adaptation);
    return nullptr;
  }
  return &it->second;
}

std::optional<std::string> Adaptations::on_ready(const proto::AdaptReady& ready) {
  std::optional<std::string> error;
  Live* live = find(ready.job, ready.adaptation, ready.node, error);
  if (!live) return error;
  if (live->open) return "adaptation " + std::to_string(ready.adaptation) + " is already open";
  if (ready.ranks.size() != ready.endpoints.size()) {
    return std::string("ranks and endpoints differ in length");
  }
  const int window = static_cast<int>(live->endpoints.size());
  for (std::size_t i = 0; i < ready.ranks.size(); ++i) {
    const int w = ready.ranks[i];
    if (w < 0 || w >= window || ready.endpoints[i].empty()) {
      return "rank " + std::to_string(w) + " is not in the window of " + std::to_string(window) +
             " or has no endpoint";
    }
    live->endpoints[static_cast<std::size_t>(w)] = ready.endpoints[i];
  }
  live->ready.insert(ready.node);
  if (live->ready.size() < live->involved.size()) return std::nullopt;
  for (int w = 0; w < window; ++w) {
    // An MPI expansion's new processes come once the window is open.
    if (live->mpi_spawn && live->begin.old_ranks[static_cast<std::size_t>(w)] < 0) continue;
    if (live->endpoints[static_cast<std::size_t>(w)].empty()) {
      end(ready.job, "no process reported window rank " + std::to_string(w));
      return std::nullopt;
    }
  }
  // Step 4 begins: every process may now redistribute.
  proto::AdaptGo go{ready.job, ready.adaptation, live->endpoints};
  for (const std::string& node : live->involved) agents_.send(node, proto::type::kAdaptGo, go);
  live->open = true;
  return std::nullopt;
}

std::optional<std::string> Adaptations::on_complete(const proto::AdaptReport& report) {
  std::optional<std::string> error;
  Live* live = find(report.job, report.adaptation, report.node, error);
  if (!live) return error;
  if (!live->open) return std::string("complete before its window opened");
  live->complete.insert(report.node);
  if (live->complete.size() < live->involved.size()) return std::nullopt;
  // Step 5 done everywhere: the step has its new shape.
  if (StepRecord* step = steps_.find(report.job, live->begin.step)) {
    const int joined = std::max(0, live->begin.new_size - live->begin.old_size);
    step->remaining += joined;  // leavers report their exit as usual
    step->tasks = live->begin.new_size;
    step->layout = live->layout;
    step->expansion.reset();
    if (notify_client_ && !step->client.empty()) {
      notify_client_(step->client,
                     proto::StepResized{report.job, live->begin.step, step->tasks, joined});
    }
  }
  done(report.job, true);
  return std::nullopt;
}

std::optional<std::string> Adaptations::on_failed(const proto::AdaptReport& report) {
  std::optional<std::string> error;
  Live* live = find(report.job, report.adaptation, report.node, error);
  if (!live) return error;
  end(report.job, "node " + report.node + ": " + report.message);
  return std::nullopt;
}

void Adaptations::node_lost(const std::string& node) {
  std::vector<JobId> hit;
  for (const auto& [job, live] : live_) {
    if (contains(live.involved, node)) hit.push_back(job);
  }
  for (JobId job : hit) end(job, "node " + node + " was lost");
}

std::vector<std::string> Adaptations::withdraw(JobId job, const std::string& reason) {
  core_changes_.erase(job);  // the job is stopping: its cores go with it
  return withdraw_live(job, reason);
}

std::vector<std::string> Adaptations::withdraw_live(JobId job, const std::string& reason) {
  auto it = live_.find(job);
  if (it == live_.end()) return {};
  std::vector<std::string> added = it->second.added;
  if (StepRecord* step = steps_.find(job, it->second.begin.step)) step->expansion.reset();
  proto::AdaptAbort abort{job, it->second.begin.adaptation, reason};
  for (const std::string& node : it->second.involved) {
    agents_.send(node, proto::type::kAdaptAbort, abort);
  }
  live_.erase(it);
  return added;
}

void Adaptations::expire(double now) {
  std::vector<JobId> late;
  for (const auto& [job, live] : live_) {
    if (live.deadline <= now) late.push_back(job);
  }
  for (JobId job : late) {
    const Live& live = live_.at(job);
    end(job, "not complete within " + std::to_string(timeout_s_) + " s (" +
                 std::to_string(live.open ? live.complete.size() : live.ready.size()) + " of " +
                 std::to_string(live.involved.size()) + " nodes " +
                 (live.open ? "committed)" : "ready)"));
  }
}

void Adaptations::end(JobId job, const std::string& why) {
  auto it = live_.find(job);
  if (it == live_.end()) return;
  const bool open = it->second.open;
  const std::uint64_t adaptation = it->second.begin.adaptation;
  withdraw_live(job, why);
  if (!open) {
    spdlog::warn("job {}: adaptation {} rolled back: {}", job, adaptation, why);
    done(job, false);
    return;
  }
  // The processes were moving their data: no consistent state to go back to.
  core_changes_.erase(job);
  spdlog::error("job {}: adaptation {} failed in its window: {}; the job fails", job, adaptation,
                why);
  results_.push([job, why](Engine& engine) { engine.fail(job, "adaptation failed: " + why); });
}

void Adaptations::send_cores(JobId job, const std::map<std::string, std::vector<int>>& cores) {
  const proto::JobCores body{job, cores};
  for (const auto& [node, ids] : cores) agents_.send(node, proto::type::kJobCores, body);
}

void Adaptations::done(JobId job, bool ok) {
  live_.erase(job);
  if (auto it = core_changes_.find(job); it != core_changes_.end()) {
    if (ok && !it->second.expand) send_cores(job, it->second.after);   // committed: narrower
    if (!ok && it->second.expand) send_cores(job, it->second.before);  // rolled back
    core_changes_.erase(it);
  }
  results_.push([job, ok](Engine& engine) { engine.adaptation_done(job, ok); });
}

}  // namespace sched::daemon
