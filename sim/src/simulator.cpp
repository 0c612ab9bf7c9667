#include "sched/sim/simulator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <tuple>

#include "sched/core_map.hpp"

namespace sched::sim {
namespace {

// Within one timestamp (docs/design.md §7). A time limit comes after completions so
// that a job whose work ends exactly at its limit completes.
constexpr int kOrderCompletion = 0;
constexpr int kOrderWalltime = 1;
constexpr int kOrderSubmission = 2;
constexpr int kOrderTimed = 3;
constexpr int kOrderTick = 4;

// Work left below this many seconds is done (rounding of rate × time).
constexpr double kWorkEpsilon = 1e-6;

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

bool Simulator::Pending::operator>(const Pending &other) const {
  return std::tie(time, order, seq) > std::tie(other.time, other.order, other.seq);
}

Simulator::Simulator(const Workload &workload, const JobSource &jobs, SimConfig config)
    : Simulator(workload, config) {
  if (!workload.jobs.empty()) {
    throw std::invalid_argument(
        "a simulator takes its jobs from the workload or a source, not both");
  }
  source_ = &jobs;
  start_sizes_.assign(job_count(), 0);
  push_next_submission();
}

Simulator::Simulator(const Workload &workload, SimConfig config)
    : workload_(workload), config_(config), engine_(clock_, *this, config.engine) {
  clock_.set(config_.start);
  engine_.add_sink(this);
  const int nodes = config_.nodes > 0 ? config_.nodes : workload_.nodes;
  if (workload_.cores_partition) {
    // Issue 20 item 2: every node in one invasive partition, jobs by cores.
    PartitionSpec cores;
    cores.name = "cores";
    cores.is_default = true;
    cores.kind = PartitionKind::Cores;
    for (int i = 0; i < nodes; ++i) {
      engine_.add_node(sim_node_name(i), workload_.cores_per_node);
      cores.nodes.push_back(sim_node_name(i));
    }
    if (Status set = engine_.set_partitions({cores}); !set.ok()) {
      throw std::invalid_argument(set.message());
    }
    for (int i = 0; i < nodes; ++i) {
      (void)engine_.set_node_sockets(sim_node_name(i), workload_.sockets_per_node);
    }
  } else {
    for (int i = 0; i < nodes; ++i) engine_.add_node(sim_node_name(i));
  }
  start_sizes_.assign(workload_.jobs.size(), 0);
  // Jobs put in the engine by the caller (a twin's) are in from the start.
  for (std::size_t i = 0; i < workload_.jobs.size(); ++i) {
    const WorkloadJob &job = workload_.jobs[i];
    if (!job.restored) continue;
    workload_index_[job.id] = i;
    if (job.spec.power_max_w > 0 || job.spec.power_min_w > 0) jobs_draw_power_ = true;
    ++submitted_;
  }
  push_next_submission();
  for (std::size_t i = 0; i < workload_.events.size(); ++i) {
    push(Pending{workload_.events[i].time, kOrderTimed, ++seq_, Kind::Timed, i, 0, 0});
  }
}

Simulator::~Simulator() = default;

void Simulator::push(Pending event) { queue_.push(event); }

void Simulator::push_next_submission() {
  // One submission queued at a time: the workload is in submission order,
  // so the next one is queued before anything that comes after it is
  // handled, and the queue keeps no entry per job (issue 15).
  if (!source_) {
    while (next_submission_ < workload_.jobs.size() && workload_.jobs[next_submission_].restored) {
      ++next_submission_;
    }
  }
  if (next_submission_ >= job_count()) return;
  const std::size_t index = next_submission_++;
  // The source's job is made in its map node: try_emplace converts a Made
  // there, with no temporary WorkloadJob to move and destroy (issue 15).
  struct Made {
    const JobSource &source;
    std::size_t index;
    operator WorkloadJob() const { return source.make(index); }  // implicit: the point
  };
  const WorkloadJob &job = source_ ? made_.try_emplace(index, Made{*source_, index}).first->second
                                   : workload_.jobs[index];
  push(Pending{job.submit, kOrderSubmission, static_cast<std::uint64_t>(job.id), Kind::Submission,
               index, job.id, 0});
}

JobRecord Simulator::record_of(const Job &job) const {
  JobRecord record;
  record.id = job.id;
  record.submit = job.submit_time;
  record.start = job.start_time;
  record.end = job.end_time;
  record.nodes = job.spec.nodes;
  record.kind = job.spec.kind;
  record.state = job.state;
  record.node_seconds = job.node_seconds;
  record.resizes = job.run->expansions + job.run->shrinks;
  if (job.start_time >= 0) {
    const auto index = workload_index_.find(job.id);
    record.start_nodes = index != workload_index_.end() ? start_sizes_[index->second] : 0;
    // Its allocation is gone once it ended: what it started at plus what
    // adaptations gave it.
    record.end_nodes = job.end_time >= 0 ? record.start_nodes + job.run->gain : job.size();
  }
  return record;
}

void Simulator::drop_ended() {
  for (const JobId id : ended_) {
    if (const auto it = workload_index_.find(id); it != workload_index_.end()) {
      if (source_) made_.erase(it->second);
      workload_index_.erase(it);
    }
    if (config_.forget_ended_jobs) (void)engine_.forget_job(id);
  }
  ended_.clear();
}

void Simulator::schedule_tick(double after) {
  if (config_.tick_s <= 0 || tick_scheduled_) return;
  Policy *policy = engine_.policy();
  // Ages and fair share are recomputed at ticks (issue 18 item 5), as in schedd.
  const bool priorities = engine_.config().priority.time_varying();
  if (!priorities && (!policy || !policy->time_dependent())) return;
  const double next = (std::floor(after / config_.tick_s) + 1) * config_.tick_s;
  push(Pending{next, kOrderTick, ++seq_, Kind::Tick, 0, 0, 0});
  tick_scheduled_ = true;
}

SimResult Simulator::run() {
  if (!queue_.empty()) clock_.set(queue_.top().time);
  while (!queue_.empty()) {
    // A superseded job event (an old completion or time limit) or a tick
    // after the last job is dropped without moving the clock: the run must
    // not end at it.
    if (is_stale(queue_.top())) {
      queue_.pop();
      continue;
    }
    const double now = queue_.top().time;
    if (config_.until && now > *config_.until) break;
    clock_.set(now);
    while (!queue_.empty() && queue_.top().time == now) {
      const Pending event = queue_.top();
      queue_.pop();
      handle(event);
    }
    const std::uint64_t actions_before = engine_.stats().actions;
    settle(engine_, results_, kMaxSettleRounds, "simulator");
    sample_power();
    drop_ended();
    // A job waiting for its --begin time is let in at that time, whatever
    // the policy's ticks.
    if (const auto begin = engine_.next_begin_time();
        begin && *begin > now && (!begin_planned_ || *begin < *begin_planned_)) {
      push(Pending{*begin, kOrderTick, ++seq_, Kind::Begin, 0, 0, 0});
      begin_planned_ = *begin;
    }
    // Ticks run while work remains: jobs in the system or still to come.
    // When all that is left is waiting jobs that a tick pass did not start,
    // with nothing running and nothing more to come, time alone changes
    // nothing more the simulator can model: the run ends and they stay
    // unfinished (a policy that never starts them would otherwise tick
    // forever).
    // A time limit plan_limit left out would still be queued (stale) until
    // its time: it counts as before.
    const bool only_ticks_left = queue_.empty() && !(limit_left_out_ > now);
    const bool stuck = only_ticks_left && engine_.running_jobs_count() == 0 &&
                       submitted_ == job_count() && engine_.stats().actions == actions_before;
    if (stuck && engine_.active_jobs() > 0) {
      spdlog::warn(
          "t={}: {} jobs wait with nothing running and nothing to "
          "come; ending the run",
          now, engine_.active_jobs());
    } else if (engine_.active_jobs() > 0 || submitted_ < job_count()) {
      schedule_tick(now);
    }
  }

  SimResult result;
  result.policy = engine_.policy() ? engine_.policy()->name() : "";
  result.passes = engine_.stats();
  result.rejected = rejected_;
  result.policy_errors = policy_errors_;
  result.first_policy_error = first_policy_error_;
  result.resizes = resizes_;
  result.end_time = clock_.now();
  // The ended jobs' records were taken as they ended; the others' now.
  result.jobs = std::move(records_);
  for (const auto &[id, job] : engine_.jobs()) {
    if (!is_terminal(job->state)) result.jobs.push_back(record_of(*job));
  }
  std::sort(result.jobs.begin(), result.jobs.end(),
            [](const JobRecord &a, const JobRecord &b) { return a.id < b.id; });
  result.metrics =
      compute_metrics(result.jobs, engine_.cluster().size(), workload_.skipped + rejected_);
  const double grace = config_.power_grace_s >= 0 ? config_.power_grace_s : config_.tick_s;
  const PowerMetrics power = compute_power_metrics(power_, result.end_time, grace);
  result.metrics.violations = power.violations;
  result.metrics.energy_j = power.energy_j;
  result.violations = power.violation_intervals;
  result.power = std::move(power_);
  return result;
}

bool Simulator::is_stale(const Pending &event) const {
  if (event.kind == Kind::Tick) {
    // Planned while work remained; the run ends with its last job.
    return engine_.active_jobs() == 0 && submitted_ == job_count();
  }
  if (event.kind != Kind::Milestone && event.kind != Kind::AdaptationEnd &&
      event.kind != Kind::Walltime) {
    return false;
  }
  auto it = runs_.find(event.job);
  return it == runs_.end() || it->second.generation != event.generation;
}

Simulator::Run *Simulator::live_run(const Pending &event) {
  auto it = runs_.find(event.job);
  if (it == runs_.end() || it->second.generation != event.generation) return nullptr;
  return &it->second;
}

void Simulator::sample_power() {
  // Cluster power changes only with the engine's state (allocations, job
  // states, power reports, the corridor, nodes up or down).
  if (!power_.empty() && engine_.state_version() == power_version_) return;
  // Summing node power costs a walk over the nodes: skipped when nothing
  // that changes it happened (issue 15).
  if (!power_.empty() && !jobs_draw_power_ && !timed_event_since_sample_) return;
  timed_event_since_sample_ = false;
  power_version_ = engine_.state_version();
  const PowerView view = engine_.power();
  const PowerSample sample{clock_.now(), view.current_w, view.lower_w, view.upper_w};
  if (!power_.empty()) {
    const PowerSample &last = power_.back();
    if (last.watts == sample.watts && last.lower_w == sample.lower_w &&
        last.upper_w == sample.upper_w) {
      return;
    }
    if (last.time == sample.time) power_.pop_back();
  }
  power_.push_back(sample);
}

void Simulator::handle(const Pending &event) {
  switch (event.kind) {
    case Kind::Milestone:
      if (Run *run = live_run(event)) reach_milestone(event.job, *run);
      return;
    case Kind::AdaptationEnd:
      if (Run *run = live_run(event)) end_adaptation(event.job, *run);
      return;
    case Kind::Walltime:
      if (Run *run = live_run(event)) {
        // Work that ends at its limit, up to rounding, completes.
        advance(*run);
        if (run->done >= workload_job(*run).runtime - kWorkEpsilon) {
          runs_.erase(event.job);
          engine_.job_ended(event.job, 0);
        } else {
          // The engine's rule (Engine::expire_time_limit): a job still
          // ADAPTING, waiting for a node its expansion was promised, is not
          // stopped; its limit is planned again once that adaptation ends.
          engine_.expire_time_limit(event.job);
        }
      }
      return;
    case Kind::Submission: {
      ++submitted_;
      WorkloadJob *made = source_ ? &made_.at(event.index) : nullptr;
      const WorkloadJob &job = made ? *made : workload_.jobs[event.index];
      const JobId id = job.id;
      if (job.spec.power_max_w > 0 || job.spec.power_min_w > 0) jobs_draw_power_ = true;
      // A second job with the id of one in the engine is refused below: it
      // must not take that one's place.
      const bool indexed = workload_index_.emplace(id, event.index).second;
      // A job made by a source is the simulator's own: its spec moves into
      // the engine (issue 15: no copy per job). What the simulator reads of
      // it later, sizes and power, are numbers, which a move leaves as they are.
      const auto result =
          made ? engine_.submit(std::move(made->spec), id) : engine_.submit(job.spec, id);
      if (!result.ok()) {
        ++rejected_;
        spdlog::warn("job {} not submitted: {}", id, result.status().message());
        if (indexed) workload_index_.erase(id);
        if (source_) made_.erase(event.index);
      }
      push_next_submission();
      return;
    }
    case Kind::Timed: {
      timed_event_since_sample_ = true;
      const TimedEvent &timed = workload_.events[event.index];
      switch (timed.type) {
        case TimedEvent::Type::Corridor:
          engine_.set_corridor(timed.lower_w, timed.upper_w);
          break;
        case TimedEvent::Type::NodeDown:
        case TimedEvent::Type::NodeUp: {
          const bool up = timed.type == TimedEvent::Type::NodeUp;
          const Status status = engine_.set_node_up(timed.node, up, "workload event");
          if (!status.ok()) spdlog::warn("timed event at {}: {}", timed.time, status.message());
          break;
        }
        case TimedEvent::Type::NodeDrain:
        case TimedEvent::Type::NodeResume: {
          const bool drain = timed.type == TimedEvent::Type::NodeDrain;
          const Status status = engine_.set_node_draining(timed.node, drain, "workload event");
          if (!status.ok()) spdlog::warn("timed event at {}: {}", timed.time, status.message());
          break;
        }
      }
      return;
    }
    case Kind::Tick:
      tick_scheduled_ = false;
      engine_.tick();
      return;
    case Kind::Begin:
      if (begin_planned_ && *begin_planned_ <= event.time) begin_planned_.reset();
      engine_.tick();
      return;
  }
}

void Simulator::adopt_running(JobId id, double done_s) {
  const auto it = workload_index_.find(id);
  const Job *job = engine_.find_job(id);
  if (it == workload_index_.end() || !job || job->size() == 0) return;
  Run &run = runs_[id];
  run = Run{};
  run.index = it->second;
  run.nodes = model_size(*job);
  // Its size when adopted stands for its start size (jobs.csv).
  start_sizes_[run.index] = job->size() - job->run->gain;
  run.done = done_s;
  run.since = clock_.now();
  plan(id, run);
}

void Simulator::report_perf(JobId id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;  // stopped meanwhile
  Run &run = it->second;
  advance(run);
  if (engine_.config().mtct_window_s <= 0) {
    // A window of no length: the model's MTCT at this instant, an ideal
    // measurement (the papers' experiments and the replay goldens use it).
    const WorkloadJob &job = workload_job(run);
    const double fraction = job.runtime > 0 ? run.done / job.runtime : 1;
    engine_.perf_report(id, job.model.mtct(run.nodes, job.model.phase_factor(fraction)));
    return;
  }
  engine_.perf_totals(id, run.comm_s, run.compute_s, true);
}

void Simulator::on_event(const Event &event) {
  if (event.job != 0 && is_terminal(event.to) && !is_terminal(event.from)) {
    // Its record now: the engine may forget it (drop_ended).
    if (const Job *job = engine_.find_job(event.job)) records_.push_back(record_of(*job));
    ended_.push_back(event.job);
    return;
  }
  if (event.type == EventType::JobResized) {
    if (event.nodes != event.prev_nodes) {
      resizes_.push_back(ResizeRecord{event.job, event.time, event.prev_nodes, event.nodes});
    }
    // An expansion rolled back while it waited for a node (the node went
    // down) never stopped the job here: the job ran on, and its time limit
    // may have come while the engine had it ADAPTING. It is due again.
    if (auto it = runs_.find(event.job); it != runs_.end() && !it->second.adapting) {
      plan_limit(event.job, it->second);
    }
    return;
  }
  if (event.type != EventType::PolicyError) return;
  if (policy_errors_++ == 0) first_policy_error_ = event.message;
  spdlog::warn("t={}: {}", event.time, event.message);
}

// ---------------------------------------------------------------- Progress

double Simulator::rate(const Run &run) const {
  const WorkloadJob &job = workload_job(run);
  const double fraction = job.runtime > 0 ? run.done / job.runtime : 1;
  return job.model.rate(run.nodes, requested_size(job), job.model.phase_factor(fraction));
}

int Simulator::model_size(const Job &job) const {
  return workload_.cores_partition ? core_count(job.run->cores) : job.size();
}

int Simulator::requested_size(const WorkloadJob &job) const {
  return workload_.cores_partition ? std::max(job.spec.layout->cores, 1) : job.spec.nodes;
}

void Simulator::advance(Run &run) {
  const double now = clock_.now();
  if (!run.adapting && !run.suspended && now > run.since) {
    const double from = run.done;
    run.done += rate(run) * (now - run.since);
    measure(run, from, run.done);
    engine_.perf_totals(workload_job(run).id, run.comm_s, run.compute_s, false);
  }
  run.since = now;
}

void Simulator::measure(Run &run, double from, double to) const {
  const WorkloadJob &job = workload_job(run);
  const double work = job.runtime;
  for (double at = from; at < to;) {
    const double fraction = work > 0 ? at / work : 1;
    double end = work > 0 ? std::min(to, job.model.phase_end(fraction) * work) : to;
    if (end <= at) end = to;  // at a boundary up to rounding
    const double phase = job.model.phase_factor(fraction);
    const double seconds = (end - at) / job.model.rate(run.nodes, requested_size(job), phase);
    const double mtct = job.model.mtct(run.nodes, phase);
    run.comm_s += seconds * mtct / (1 + mtct);
    run.compute_s += seconds / (1 + mtct);
    at = end;
  }
}

void Simulator::plan(JobId id, Run &run) {
  run.generation = ++generations_;
  const WorkloadJob &job = workload_job(run);
  const double now = clock_.now();
  const double work = job.runtime;
  // The next point where something happens: the end of the work, the next
  // phase boundary (the rate changes there unless the job runs at its
  // requested size), or the next evolving request.
  double mark = work;
  if (run.nodes != requested_size(job) && work > 0) {
    // Past a boundary reached up to rounding: the phase after it.
    const double boundary = job.model.phase_end((run.done + kWorkEpsilon) / work) * work;
    if (boundary > run.done + kWorkEpsilon) mark = std::min(mark, boundary);
  }
  if (run.next_request < job.model.requests.size()) {
    mark = std::min(mark, job.model.requests[run.next_request].at_done * work);
  }
  const double left = std::max(mark - run.done, 0.0);
  const double milestone = now + left / rate(run);
  push(Pending{milestone, kOrderCompletion, ++seq_, Kind::Milestone, 0, id, run.generation});
  plan_limit(id, run, milestone);
}

void Simulator::plan_limit(JobId id, const Run &run, double milestone) {
  if (const Job *engine_job = engine_.find_job(id); engine_job && engine_job->est_end() >= 0) {
    const double limit = std::max(engine_job->est_end(), clock_.now());
    // A limit not before the milestone of its generation would be stale when
    // it came (completions come first within an instant): the job has ended
    // or been planned anew by then. Most jobs end before their limit.
    if (limit >= milestone) {
      limit_left_out_ = std::max(limit_left_out_, limit);
      return;
    }
    push(Pending{limit, kOrderWalltime, ++seq_, Kind::Walltime, 0, id, run.generation});
  }
}

void Simulator::reach_milestone(JobId id, Run &run) {
  advance(run);
  const WorkloadJob &job = workload_job(run);
  if (run.done >= job.runtime - kWorkEpsilon) {
    runs_.erase(id);
    engine_.job_ended(id, 0);
    return;
  }
  const auto &requests = job.model.requests;
  while (run.next_request < requests.size() &&
         requests[run.next_request].at_done * job.runtime <= run.done + kWorkEpsilon) {
    const EvolvingStep &step = requests[run.next_request++];
    const Job *engine_job = engine_.find_job(id);
    if (!engine_job || engine_job->spec.kind != JobKind::Evolving) continue;
    const int target = evolving_target(step, engine_job->spec, engine_job->size());
    if (target == engine_job->size()) continue;
    const auto op =
        target > engine_job->size() ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink;
    const Status status = engine_.resize_request(id, ResizeRequest{op, target});
    if (!status.ok()) {
      spdlog::debug("t={}: job {} request not made: {}", clock_.now(), id, status.message());
    }
  }
  plan(id, run);
}

void Simulator::end_adaptation(JobId id, Run &run) {
  const int to = run.adapt_to;
  // Told while the run still adapts: its job.resized is this adaptation's
  // end, not a rollback (on_event).
  engine_.adaptation_done(id, true);
  // The engine may have ended the job meanwhile; a live run plans on.
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  Run &live = it->second;
  live.adapting = false;
  live.since = clock_.now();
  live.nodes = to;
  plan(id, live);
}

// ---------------------------------------------------------------- Enactor

void Simulator::start(const Job &job) {
  auto it = workload_index_.find(job.id);
  if (it == workload_index_.end()) {
    // Not from the workload (cannot happen in a replay): nothing to run.
    const JobId id = job.id;
    results_.push([id](Engine &engine) { engine.job_ended(id, kKilledStatus); });
    return;
  }
  Run &run = runs_[job.id];
  run = Run{};
  run.index = it->second;
  run.nodes = model_size(job);
  start_sizes_[run.index] = job.size();
  run.since = clock_.now();
  plan(job.id, run);
  const JobId id = job.id;
  results_.push([id](Engine &engine) { engine.job_started(id); });
}

void Simulator::resize(const Job &job, const Resize &resize) {
  auto it = runs_.find(job.id);
  if (it == runs_.end()) return;
  Run &run = it->second;
  advance(run);
  run.adapting = true;
  // By cores in an invasive partition: the model's size is the job's cores.
  const bool by_cores = !resize.cores.empty();
  const int from = by_cores ? resize.cores_from : resize.from;
  run.adapt_to = by_cores ? resize.cores_to : resize.to;
  run.comm_s = run.compute_s = 0;   // measured anew at the new size
  run.generation = ++generations_;  // no progress, no time limit while adapting
  const double cost = workload_job(run).model.adaptation.seconds(from, run.adapt_to);
  push(Pending{clock_.now() + cost, kOrderCompletion, ++seq_, Kind::AdaptationEnd, 0, job.id,
               run.generation});
}

void Simulator::stop(const Job &job, StopReason /*reason*/) {
  runs_.erase(job.id);  // its scheduled events no longer apply
  const JobId id = job.id;
  results_.push([id](Engine &engine) { engine.job_ended(id, kKilledStatus); });
}

void Simulator::suspend(const Job &job) {
  auto it = runs_.find(job.id);
  if (it == runs_.end()) return;
  Run &run = it->second;
  advance(run);
  run.suspended = true;
  run.generation = ++generations_;  // its milestone and time limit wait for the resume
}

void Simulator::resume(const Job &job) {
  auto it = runs_.find(job.id);
  if (it == runs_.end()) return;
  Run &run = it->second;
  run.suspended = false;
  run.since = clock_.now();
  plan(job.id, run);  // the rest of its work, and its limit stretched by the engine
}

void Simulator::request_perf(const Job &job) {
  const JobId id = job.id;
  results_.push([this, id](Engine &) { report_perf(id); });
}

}  // namespace sched::sim
