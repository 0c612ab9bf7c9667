#include "sched/sim/simulator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace sched::sim {
namespace {

// Within one timestamp (DESIGN §7).
constexpr int kOrderCompletion = 0;
constexpr int kOrderSubmission = 1;
constexpr int kOrderTimed = 2;
constexpr int kOrderTick = 3;

// Passes and enactment results that chain at one instant are bounded: a
// policy that keeps acting without time passing is a bug, not a reason to hang.
constexpr int kMaxSettleRounds = 1000;

// Exit status of a job the simulator stops: killed by SIGKILL.
constexpr int kKilledStatus = -9;

}  // namespace

std::string sim_node_name(int index) {
  char name[16];
  std::snprintf(name, sizeof name, "n%04d", index + 1);
  return name;
}

bool Simulator::Pending::operator>(const Pending& other) const {
  return std::tie(time, order, seq) > std::tie(other.time, other.order, other.seq);
}

Simulator::Simulator(const Workload& workload, SimConfig config)
    : workload_(workload), config_(config), engine_(clock_, *this, config.engine) {
  engine_.add_sink(this);
  const int nodes = config_.nodes > 0 ? config_.nodes : workload_.nodes;
  for (int i = 0; i < nodes; ++i) engine_.add_node(sim_node_name(i));
  for (std::size_t i = 0; i < workload_.jobs.size(); ++i) {
    const WorkloadJob& job = workload_.jobs[i];
    workload_index_[job.id] = i;
    push(Pending{job.submit, kOrderSubmission, static_cast<std::uint64_t>(job.id),
                 Kind::Submission, i, job.id, 0});
  }
  for (std::size_t i = 0; i < workload_.events.size(); ++i) {
    push(Pending{workload_.events[i].time, kOrderTimed, ++seq_, Kind::Timed, i, 0, 0});
  }
}

Simulator::~Simulator() = default;

void Simulator::push(Pending event) { queue_.push(event); }

void Simulator::schedule_tick(double after) {
  if (config_.tick_s <= 0 || tick_scheduled_) return;
  Policy* policy = engine_.policy();
  if (!policy || !policy->time_dependent()) return;
  const double next = (std::floor(after / config_.tick_s) + 1) * config_.tick_s;
  push(Pending{next, kOrderTick, ++seq_, Kind::Tick, 0, 0, 0});
  tick_scheduled_ = true;
}

SimResult Simulator::run() {
  if (!queue_.empty()) clock_.set(queue_.top().time);
  while (!queue_.empty()) {
    const double now = queue_.top().time;
    clock_.set(now);
    while (!queue_.empty() && queue_.top().time == now) {
      const Pending event = queue_.top();
      queue_.pop();
      handle(event);
    }
    const std::uint64_t actions_before = engine_.stats().actions;
    settle();
    // Ticks run while work remains: jobs in the system or still to come.
    // When all that is left is waiting jobs that a tick pass did not start,
    // with nothing running and nothing more to come, time alone changes
    // nothing more the simulator can model: the run ends and they stay
    // unfinished (a policy that never starts them would otherwise tick forever).
    const bool only_ticks_left = queue_.empty();
    const bool stuck = only_ticks_left && engine_.running_jobs_count() == 0 &&
                       submitted_ == workload_.jobs.size() &&
                       engine_.stats().actions == actions_before;
    if (stuck && engine_.active_jobs() > 0) {
      spdlog::warn("t={}: {} jobs wait with nothing running and nothing to come; ending the run",
                   now, engine_.active_jobs());
    } else if (engine_.active_jobs() > 0 || submitted_ < workload_.jobs.size()) {
      schedule_tick(now);
    }
  }

  SimResult result;
  result.policy = engine_.policy() ? engine_.policy()->name() : "";
  result.passes = engine_.stats();
  result.rejected = rejected_;
  result.policy_errors = policy_errors_;
  result.first_policy_error = first_policy_error_;
  result.end_time = clock_.now();
  result.jobs.reserve(engine_.jobs().size());
  for (const auto& [id, job] : engine_.jobs()) {
    JobRecord record;
    record.id = id;
    record.submit = job->submit_time;
    record.start = job->start_time;
    record.end = job->end_time;
    record.nodes = job->spec.nodes;
    record.kind = job->spec.kind;
    record.state = job->state;
    record.node_seconds = job->node_seconds;
    result.jobs.push_back(record);
  }
  std::sort(result.jobs.begin(), result.jobs.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
  result.metrics = compute_metrics(result.jobs, engine_.cluster().size(),
                                   workload_.skipped + rejected_);
  return result;
}

void Simulator::handle(const Pending& event) {
  switch (event.kind) {
    case Kind::Completion: {
      auto it = generation_.find(event.job);
      if (it == generation_.end() || it->second != event.generation) return;  // stale
      engine_.job_ended(event.job, 0);
      return;
    }
    case Kind::Walltime: {
      auto it = generation_.find(event.job);
      if (it == generation_.end() || it->second != event.generation) return;
      engine_.walltime_reached(event.job);
      return;
    }
    case Kind::Submission: {
      ++submitted_;
      const WorkloadJob& job = workload_.jobs[event.index];
      auto outcome = engine_.submit(job.spec, job.id);
      if (!outcome.ok()) {
        ++rejected_;
        spdlog::warn("job {} not submitted: {}", job.id, outcome.error);
      }
      return;
    }
    case Kind::Timed: {
      const TimedEvent& timed = workload_.events[event.index];
      switch (timed.type) {
        case TimedEvent::Type::Corridor:
          engine_.set_corridor(timed.lower_w, timed.upper_w);
          break;
        case TimedEvent::Type::NodeDown:
        case TimedEvent::Type::NodeUp: {
          const bool up = timed.type == TimedEvent::Type::NodeUp;
          if (auto error = engine_.set_node_up(timed.node, up, "workload event")) {
            spdlog::warn("timed event at {}: {}", timed.time, *error);
          }
          break;
        }
      }
      return;
    }
    case Kind::Tick:
      tick_scheduled_ = false;
      engine_.tick();
      return;
  }
}

void Simulator::settle() {
  for (int round = 0; round < kMaxSettleRounds; ++round) {
    engine_.run_pass_if_due();
    if (started_now_.empty() && stopped_now_.empty() && adapted_now_.empty()) return;
    std::vector<JobId> started = std::move(started_now_);
    std::vector<JobId> stopped = std::move(stopped_now_);
    auto adapted = std::move(adapted_now_);
    started_now_.clear();
    stopped_now_.clear();
    adapted_now_.clear();
    for (JobId id : started) engine_.job_started(id);
    for (JobId id : stopped) engine_.job_ended(id, kKilledStatus);
    for (auto [id, ok] : adapted) engine_.adaptation_done(id, ok);
  }
  spdlog::error("simulator: passes kept acting at t={} without time passing; moving on",
                clock_.now());
}

void Simulator::on_event(const Event& event) {
  if (event.type != EventType::PolicyError) return;
  if (policy_errors_++ == 0) first_policy_error_ = event.message;
  spdlog::warn("t={}: {}", event.time, event.message);
}

// ---------------------------------------------------------------- Enactor

void Simulator::start(const Job& job) {
  const std::uint64_t generation = ++generation_[job.id];
  auto it = workload_index_.find(job.id);
  const double runtime = it != workload_index_.end() ? workload_.jobs[it->second].runtime : 0;
  const double now = clock_.now();
  if (job.spec.walltime > 0 && runtime > job.spec.walltime) {
    push(Pending{now + job.spec.walltime, kOrderCompletion, ++seq_, Kind::Walltime, 0, job.id,
                 generation});
  } else {
    push(Pending{now + runtime, kOrderCompletion, ++seq_, Kind::Completion, 0, job.id,
                 generation});
  }
  started_now_.push_back(job.id);
}

void Simulator::resize(const Job& job, const Resize& /*resize*/) {
  // Rigid replay has no application model yet: an adaptation completes at
  // once and does not change the job's remaining runtime.
  adapted_now_.emplace_back(job.id, true);
}

void Simulator::stop(const Job& job, StopReason /*reason*/) {
  ++generation_[job.id];  // its scheduled completion no longer applies
  stopped_now_.push_back(job.id);
}

void Simulator::request_perf(const Job& /*job*/) {}

}  // namespace sched::sim
