#include "live_enactor.hpp"

#include <csignal>

#include "sched/convert/wire_convert.hpp"
#include "sched/core_resize.hpp"

namespace sched::daemon {

LiveEnactor::LiveEnactor(AgentDirectory& agents, StepTable& steps, double kill_grace_s,
                         double kill_timeout_s)
    : agents_(agents),
      kill_grace_s_(kill_grace_s),
      kill_timeout_s_(kill_timeout_s),
      adaptations_(agents, steps, results_) {}

void LiveEnactor::start(const Job& job) {
  const proto::JobLaunch launch = convert::job_launch(job, engine_->cluster());
  const JobId id = job.id;
  if (launch.nodes.empty() ||
      !agents_.send(launch.nodes.front(), proto::type::kJobLaunch, launch)) {
    // The leader's agent is gone: the launch failed; the job ends FAILED.
    results_.push([id](Engine& engine) { engine.job_ended(id, 127); });
  }
}

void LiveEnactor::resize(const Job& job, const Resize& resize) {
  const auto& nodes = resize.op == Resize::Op::Expand ? resize.added : resize.removed;
  std::vector<std::string> changed;
  for (NodeIndex n : nodes) changed.push_back(engine_->cluster().node(n).name);
  std::optional<CoreChange> cores;
  if (!resize.cores.empty()) {
    // Issue 20 item 2: a resize by cores; job.run->cores are still the old ones.
    cores.emplace();
    cores->expand = resize.op == Resize::Op::Expand;
    cores->before = convert::core_ids(job, engine_->cluster());
    Job after;
    after.run.edit().cores = job.run->cores;
    if (cores->expand) {
      add_cores(after.run.edit().cores, resize.cores);
    } else {
      remove_cores(after.run.edit().cores, resize.cores);
    }
    cores->after = convert::core_ids(after, engine_->cluster());
    cores->old_cores = resize.cores_from;
    cores->new_cores = resize.cores_to;
  }
  adaptations_.begin(job, resize, convert::node_names(job, engine_->cluster()), changed,
                     engine_->now(), std::move(cores));
}

void LiveEnactor::stop(const Job& job, StopReason reason) {
  proto::JobKill kill;
  kill.job = job.id;
  kill.grace_s = kill_grace_s_;
  switch (reason) {
    case StopReason::Cancel:
      kill.reason = "cancelled";
      break;
    case StopReason::Timeout:
      kill.reason = "time limit";
      break;
    case StopReason::Preempt:
      kill.reason = "preempted";
      break;
    case StopReason::NodeFailure:
      kill.reason = "node failure";
      break;
    case StopReason::Failure:
      kill.reason = "failed";
      break;
    case StopReason::Requeue:
      kill.reason = "requeued";
      break;
  }
  std::vector<std::string> names = convert::node_names(job, engine_->cluster());
  // Processes an unfinished expansion started on its new nodes go too.
  for (std::string& node : adaptations_.withdraw(job.id, "the job is stopping: " + kill.reason)) {
    names.push_back(std::move(node));
  }
  bool leader_reached = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool sent = agents_.send(names[i], proto::type::kJobKill, kill);
    if (i == 0) leader_reached = sent;
  }
  const JobId id = job.id;
  if (!leader_reached) {
    // Nobody will report the batch script's end: it ends now.
    results_.push([id](Engine& engine) { engine.job_ended(id, -SIGKILL); });
    return;
  }
  kills_[id] = engine_->now() + kill_grace_s_ + kill_timeout_s_;
}

void LiveEnactor::request_perf(const Job& job) {
  // Every node of the job reports what its processes measured; the daemon
  // reduces the reports to the job's MTCT.
  for (const std::string& node : convert::node_names(job, engine_->cluster())) {
    agents_.send(node, proto::type::kPerfRequest, proto::PerfRequest{job.id});
  }
}

void LiveEnactor::suspend(const Job& job) {
  // Sent before any launch on the nodes it frees (the pass enacts in call
  // order, and one agent's messages arrive in order): the urgent job's
  // processes never share a node with running ones.
  for (const std::string& node : convert::node_names(job, engine_->cluster())) {
    agents_.send(node, proto::type::kJobSuspend, proto::JobSuspend{job.id});
  }
}

void LiveEnactor::resume(const Job& job) {
  for (const std::string& node : convert::node_names(job, engine_->cluster())) {
    agents_.send(node, proto::type::kJobResume, proto::JobSuspend{job.id});
  }
}

std::vector<JobId> LiveEnactor::overdue_kills(double now) {
  std::vector<JobId> overdue;
  for (auto it = kills_.begin(); it != kills_.end();) {
    if (it->second <= now) {
      overdue.push_back(it->first);
      it = kills_.erase(it);
    } else {
      ++it;
    }
  }
  return overdue;
}

}  // namespace sched::daemon
