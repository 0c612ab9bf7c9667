#include "sched/sim/twin.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace sched::sim {
namespace {

// A twin job's spec: one job on its own, without what ties it to jobs and
// times of the live system the twin does not model.
JobSpec arrival_spec(JobSpec spec) {
  spec.hold = false;
  if (spec.extra.has_value()) {
    spec.extra.edit().dependency.clear();
    spec.extra.edit().begin_time = 0;
    spec.extra.edit().array.clear();
    spec.extra.edit().array_job_id = 0;
    spec.extra.edit().array_task_id = -1;
    spec.extra.edit().array_throttle = 0;
  }
  return spec;
}

// Seconds a job without a time limit runs: past the horizon.
double unbounded(double horizon_s) { return horizon_s + 1; }

// The job as the twin's engine holds it: not yet charged for any node time
// (the twin counts from the snapshot on), one job on its own.
Job restored(Job job) {
  job.end_time = -1;
  if (job.spec.extra.has_value()) {
    job.spec.extra.edit().array.clear();
    job.spec.extra.edit().array_job_id = 0;
    job.spec.extra.edit().array_task_id = -1;
    job.spec.extra.edit().array_throttle = 0;
  }
  job.node_seconds = 0;
  if (job.run->expected_start) job.run.edit().expected_start.reset();
  return job;
}

}  // namespace

Workload twin_workload(const LiveSnapshot& snapshot, double horizon_s) {
  Workload workload;
  workload.source = "twin";
  workload.nodes = 0;  // the twin adds the snapshot's nodes by name
  const double now = snapshot.now;
  JobId last_id = 0;
  for (const LiveSnapshot::Held& held : snapshot.running) {
    const Job& job = held.job;
    last_id = std::max(last_id, job.id);
    WorkloadJob entry;
    entry.id = job.id;
    entry.submit = job.submit_time;
    entry.spec = job.spec;
    entry.restored = true;
    const double left =
        job.spec.walltime > 0 ? std::max(job.est_end() - now, 0.0) : unbounded(horizon_s);
    // Work is counted at the requested size: what is left at the rate of
    // its size now is that much work.
    const int size = static_cast<int>(held.nodes.size());
    entry.runtime = left * entry.model.rate(size, std::max(job.spec.nodes, 1), 1);
    workload.jobs.push_back(std::move(entry));
  }
  for (const Job& job : snapshot.pending) {
    last_id = std::max(last_id, job.id);
    WorkloadJob entry;
    entry.id = job.id;
    entry.submit = job.submit_time;
    entry.spec = job.spec;
    entry.restored = true;
    entry.runtime = job.spec.walltime > 0 ? job.spec.walltime : unbounded(horizon_s);
    workload.jobs.push_back(std::move(entry));
  }
  for (const LiveSnapshot::Arrival& arrival : snapshot.arrivals) {
    last_id = std::max(last_id, arrival.id);
  }
  const double window = snapshot.arrival_window_s;
  std::vector<WorkloadJob> arrivals;
  if (window > 0) {
    for (const LiveSnapshot::Arrival& arrival : snapshot.arrivals) {
      for (double at = arrival.time + window; at <= now + horizon_s; at += window) {
        if (at < now) continue;
        WorkloadJob entry;
        entry.submit = at;
        entry.spec = arrival_spec(arrival.spec);
        entry.runtime = entry.spec.walltime > 0 ? entry.spec.walltime : unbounded(horizon_s);
        arrivals.push_back(std::move(entry));
      }
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; });
  for (WorkloadJob& entry : arrivals) {
    entry.id = ++last_id;
    workload.jobs.push_back(std::move(entry));
  }
  return workload;
}

TwinResult run_twin(const LiveSnapshot& snapshot, std::shared_ptr<Policy> policy,
                    const TwinOptions& options) {
  if (!(options.horizon_s > 0)) throw std::invalid_argument("the horizon must be positive");
  Workload workload = twin_workload(snapshot, options.horizon_s);
  // The snapshot's corridor, set at its time: also the run's first instant,
  // where the first pass runs on the restored state.
  TimedEvent corridor;
  corridor.time = snapshot.now;
  corridor.lower_w = snapshot.corridor_lower_w;
  corridor.upper_w = snapshot.corridor_upper_w;
  workload.events.push_back(corridor);

  SimConfig config;
  config.tick_s = options.tick_s;
  config.start = snapshot.now;
  config.until = snapshot.now + options.horizon_s;
  config.forget_ended_jobs = false;  // its metrics read the ended jobs below
  Simulator sim(workload, config);
  Engine& engine = sim.engine();
  engine.set_ended_job_lookup([](JobId) { return std::optional<JobState>(JobState::Completed); });
  int usable = 0;
  for (const LiveSnapshot::Node& node : snapshot.nodes) {
    engine.add_node(node.name, node.cores);
    if (node.gpus > 0) (void)engine.set_node_gpus(node.name, node.gpus);
    if (node.up && !node.draining) ++usable;
  }
  sim.set_policy(std::move(policy));
  for (const LiveSnapshot::Held& held : snapshot.running) {
    if (const Status status = engine.restore_job(restored(held.job), held.nodes); !status.ok()) {
      throw std::runtime_error("snapshot job " + std::to_string(held.job.id) + ": " +
                               status.message());
    }
  }
  for (const LiveSnapshot::Node& node : snapshot.nodes) {
    if (!node.up) (void)engine.set_node_up(node.name, false, "down in the snapshot");
    if (node.draining) (void)engine.set_node_draining(node.name, true, "draining in the snapshot");
  }
  for (const Job& job : snapshot.pending) {
    if (const Status status = engine.restore_job(restored(job), {}); !status.ok()) {
      throw std::runtime_error("snapshot job " + std::to_string(job.id) + ": " + status.message());
    }
  }
  for (const LiveSnapshot::Held& held : snapshot.running) sim.adopt_running(held.job.id, 0);

  TwinResult result;
  result.now = snapshot.now;
  result.horizon_s = options.horizon_s;
  result.sim = sim.run();
  result.policy = result.sim.policy;

  const double horizon = snapshot.now + options.horizon_s;  // its end
  TwinMetrics& m = result.metrics;
  double waits = 0;
  double responses = 0;
  double node_seconds = 0;
  std::map<JobId, bool> was_running;
  for (const LiveSnapshot::Held& held : snapshot.running) was_running[held.job.id] = true;
  for (const auto& [id, job] : engine.jobs()) {
    node_seconds += job->node_seconds;
    if (!job->allocation.empty()) node_seconds += job->size() * (horizon - job->allocation_since);
    if (job->end_time >= 0 && job->start_time >= 0) {
      ++m.finished;
      responses += job->end_time - job->submit_time;
    }
    if (was_running.count(id)) continue;
    if (job->submit_time > horizon) continue;
    if (job->start_time >= 0) ++m.started;
    if (job->start_time < 0 && is_terminal(job->state)) continue;  // cancelled while waiting
    if (job->start_time < 0) ++m.still_waiting;
    const double wait = (job->start_time >= 0 ? job->start_time : horizon) - job->submit_time;
    ++m.waited;
    waits += wait;
    m.max_wait_s = std::max(m.max_wait_s, wait);
  }
  if (m.waited > 0) m.mean_wait_s = waits / m.waited;
  if (m.finished > 0) m.mean_response_s = responses / m.finished;
  if (usable > 0) m.utilization = node_seconds / (usable * options.horizon_s);
  m.resizes = static_cast<int>(result.sim.resizes.size());
  m.violations = result.sim.metrics.violations;
  m.arrivals =
      static_cast<int>(workload.jobs.size() - snapshot.running.size() - snapshot.pending.size());
  m.policy_errors = result.sim.policy_errors;
  m.first_policy_error = result.sim.first_policy_error;
  for (const Job& job : snapshot.pending) {
    const Job* twin_job = engine.find_job(job.id);
    if (twin_job && twin_job->start_time >= 0) {
      result.predicted_start[job.id] = twin_job->start_time;
    }
  }
  return result;
}

std::string write_snapshot_policy(const LiveSnapshot& snapshot, const std::string& dir) {
  namespace fs = std::filesystem;
  if (snapshot.policy_files.empty()) {
    throw std::runtime_error("the snapshot holds no policy file");
  }
  // Every name checked before anything is written.
  for (const LiveSnapshot::PolicyFile& file : snapshot.policy_files) {
    const fs::path name(file.name);
    bool escapes = name.empty() || name.is_absolute();
    for (const auto& part : name) escapes = escapes || part == "..";
    if (escapes) throw std::runtime_error("policy file name '" + file.name + "' leaves its folder");
  }
  std::string main_path;
  for (const LiveSnapshot::PolicyFile& file : snapshot.policy_files) {
    const fs::path path = fs::path(dir) / fs::path(file.name);
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << file.text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
    if (main_path.empty()) main_path = path.string();
  }
  return main_path;
}

}  // namespace sched::sim
