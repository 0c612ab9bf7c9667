// Engine state and inputs. The scheduling pass and enactment are in
// engine_pass.cpp.
#include "sched/engine.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sched/constraints.hpp"
#include "sched/placement.hpp"

namespace sched {

Engine::Engine(Clock& clock, Enactor& enactor, EngineConfig config)
    : clock_(clock),
      enactor_(enactor),
      config_(config),
      fair_share_(config_.priority.decay_half_life_s, config_.priority.shares),
      next_priority_calc_(clock.now() + config_.priority.calc_period_s) {}

NodeIndex Engine::add_node(std::string name, int cores) {
  const NodeIndex index = cluster_.add_node(std::move(name), cores);
  cluster_.set_partition(index, partition_of_node(cluster_.node(index).name));
  track_cores(index);
  ++state_version_;
  Event event;
  event.type = EventType::NodeUp;
  event.node = cluster_.node(index).name;
  emit(std::move(event));
  return index;
}

Status Engine::set_node_gpus(const std::string& name, int gpus) {
  const auto index = cluster_.find(name);
  if (!index) return Status::not_found("no node " + name);
  if (cluster_.node(*index).gpus != gpus) {
    cluster_.set_gpus(*index, gpus);
    ++state_version_;
  }
  return {};
}

void Engine::set_policy(std::shared_ptr<Policy> policy) {
  policy_ = std::move(policy);
  stats_.consecutive_failed = 0;  // the count is of the policy running now
  ++state_version_;
}

void Engine::add_sink(EventSink* sink) { sinks_.push_back(sink); }

// ---------------------------------------------------------------- queries

const Job* Engine::find_job(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

Job* Engine::job_mut(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

Status Engine::forget_job(JobId id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::not_found("no job " + std::to_string(id));
  const JobState state = it->second->state;
  if (!is_terminal(state)) {
    return Status::conflict("job " + std::to_string(id) + " has not ended (" +
                            std::string(to_string(state)) + ")");
  }
  forgotten_.emplace(id, state);
  auto node = jobs_.extract(it);
  node.mapped().reset();  // the job goes now; its node waits for the next one
  job_nodes_.keep(std::move(node));
  return {};
}

std::vector<const Job*> Engine::pending_jobs() const { return pending_.merged(); }

std::vector<const Job*> Engine::running_jobs() const {
  std::vector<const Job*> out;
  out.reserve(running_.size());
  for (const auto& [key, job] : running_) out.push_back(job);
  return out;
}

std::vector<const Job*> Engine::suspended_jobs() const {
  std::vector<const Job*> out;
  out.reserve(suspended_.size());
  for (JobId id : suspended_) out.push_back(find_job(id));
  std::sort(out.begin(), out.end(), [](const Job* a, const Job* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->run->suspended_since != b->run->suspended_since)
      return a->run->suspended_since < b->run->suspended_since;
    return a->id < b->id;
  });
  return out;
}

double Engine::cluster_power_w() const {
  double watts = 0;
  // A job's nodes mostly lie side by side: look each holder up once per run.
  JobId last_id = 0;
  const Job* last = nullptr;
  for (const Node& node : cluster_.nodes()) {
    if (!node.up) continue;
    if (node.job != last_id) {
      last_id = node.job;
      last = node.job != 0 ? find_job(node.job) : nullptr;
    }
    const Job* job = last;
    if (!job || job->state == JobState::Starting) {
      watts += config_.idle_w_per_node;
    } else if (job->run->power_w) {
      watts += *job->run->power_w;
    } else if (job->spec.power_max_w > 0) {
      watts += (job->spec.power_min_w + job->spec.power_max_w) / 2;
    } else {
      watts += config_.idle_w_per_node;
    }
  }
  return watts;
}

PowerView Engine::power() const {
  return PowerView{corridor_lower_w_, corridor_upper_w_, cluster_power_w(),
                   config_.idle_w_per_node};
}

// ---------------------------------------------------------------- events

void Engine::emit(Event&& event) {
  event.seq = ++event_seq_;
  event.time = clock_.now();
  switch (event.type) {
    case EventType::SchedPass:
    case EventType::PolicyError:
    case EventType::JobReserved:
    case EventType::PolicyReverted:   // set_policy already counted the change
    case EventType::AuthDenied:       // a refused peer changed nothing
    case EventType::PowerViolation:   // an observation of what changed before
    case EventType::ResizeRequested:  // schedd's record; job.run->request and a grant's
    case EventType::ResizePending:    // adaptation are the engine's changes
    case EventType::ResizeGranted:
    case EventType::ResizeRefused:
    case EventType::ResizeExpired:
      break;  // a policy's own output does not change what it decides on
    default:
      ++state_version_;
  }
  for (EventSink* sink : sinks_) sink->on_event(event);
  // The policy sees events outside its own schedule() (enactment included).
  if (policy_busy_ || event.type == EventType::SchedPass) return;
  if (policy_) policy_->on_event(event);
  for (const Partition& p : partitions_) {  // partitions' own policies (issue 20)
    if (p.policy && p.policy != policy_) p.policy->on_event(event);
  }
}

void Engine::touch(Job& job) {
  ++job.version;
  // Bounded by the jobs that can still change: a consumer further behind
  // than that checks every view instead.
  touched_.append(job.id, 4096 + 2 * (pending_.listing_size() + running_.size()));
  releases_.update(job);
}

void Engine::add_running(Job& job) {
  pooled_emplace(running_, running_nodes_, std::pair{job.start_time, job.id}, &job);
  releases_.join(job);
}

void Engine::drop_running(const Job& job) {
  running_nodes_.keep(running_.extract({job.start_time, job.id}));
  releases_.leave(job.id);
}

void Engine::transition(Job& job, JobState to, EventType type, std::string message) {
  if (!is_valid_transition(job.state, to)) {
    throw std::logic_error("job " + std::to_string(job.id) + ": invalid transition " +
                           std::string(to_string(job.state)) + " -> " + std::string(to_string(to)));
  }
  const JobState from = job.state;
  Event event;
  event.type = type;
  event.job = job.id;
  event.from = job.state;
  event.to = to;
  job.state = to;
  touch(job);
  event.nodes = job.size();
  // An adaptation's start: its size before (the target is in the message).
  if (type == EventType::JobAdapting) event.prev_nodes = event.nodes;
  event.message = std::move(message);
  emit(std::move(event));
  if (from == JobState::Pending && to != JobState::Pending) forget_pending(job);
  if (is_terminal(to) && job.spec.extra->array_job_id != 0) array_task_ended(job);
  on_state_change(job);  // the jobs that wait for this one
}

void Engine::account_allocation(Job& job) {
  const double t = clock_.now();
  if (job.start_time >= 0) job.node_seconds += job.size() * (t - job.allocation_since);
  job.allocation_since = t;
}

// ---------------------------------------------------------------- inputs

namespace {

// The fewest cores of the cluster's nodes: a job may get any of them.
int smallest_cores(const Cluster& cluster) {
  int cores = 0;
  for (NodeIndex i = 0; i < cluster.size(); ++i) {
    const int here = cluster.node(i).cores;
    if (cores == 0 || here < cores) cores = here;
  }
  return cores;
}

// Issue 16 item 1: -n without -N gets its nodes from the cores here, and a
// task's cores must fit on a node. With -n or -c given, the tasks of the
// job's fullest node must fit its cores too (without either, tasks_per_node
// alone is not checked: one-cpu tasks may share cores, as before).
std::optional<std::string> fit_tasks(JobSpec& spec, const Cluster& cluster) {
  // Neither -n nor -c: nothing to check, and no walk over every node per
  // submission (a tenth of a replay's submit cost on 256 nodes).
  if (spec.layout->ntasks == 0 && spec.layout->cpus_per_task == 1) return std::nullopt;
  const int cores = smallest_cores(cluster);
  if (cores == 0) return std::nullopt;  // no nodes: the size check says so
  if (spec.layout->cpus_per_task > cores) {
    return "--cpus-per-task=" + std::to_string(spec.layout->cpus_per_task) + " is more than the " +
           std::to_string(cores) + " cores of the cluster's nodes";
  }
  if (spec.layout->nodes_from_tasks && spec.layout->ntasks > 0 && spec.kind == JobKind::Rigid) {
    spec.layout.edit().nodes_from_tasks = false;
    spec.nodes = spec.min_nodes = spec.max_nodes =
        tasks::nodes_for_tasks(spec.layout->ntasks, spec.layout->cpus_per_task, cores);
    spec.tasks_per_node = static_cast<int>(
        (static_cast<long long>(spec.layout->ntasks) + spec.nodes - 1) / spec.nodes);
    return std::nullopt;
  }
  const int fewest = spec.min_nodes > 0 ? std::min(spec.min_nodes, spec.nodes) : spec.nodes;
  if (fewest <= 0) return std::nullopt;  // normalize_spec refuses it
  const long long per_node =
      spec.layout->ntasks > 0 ? (static_cast<long long>(spec.layout->ntasks) + fewest - 1) / fewest
                              : spec.tasks_per_node;
  // In 64 bits: the counts come from the wire too.
  const long long needed = static_cast<long long>(per_node) * spec.layout->cpus_per_task;
  if (needed > cores) {
    return std::to_string(per_node) + " tasks × " + std::to_string(spec.layout->cpus_per_task) +
           " cpus on a node need " + std::to_string(needed) + " cores; the cluster's nodes have " +
           std::to_string(cores);
  }
  return std::nullopt;
}

}  // namespace

Result<JobId> Engine::submit(JobSpec spec, JobId requested_id) {
  if (auto error = normalize_spec(spec)) return Status::invalid(*error);
  if (auto error = fit_tasks(spec, cluster_)) return Status::invalid(*error);
  const int smallest = spec.kind == JobKind::Rigid ? spec.nodes : spec.min_nodes;
  if (smallest > cluster_.size()) {
    return Status::invalid("job needs " + std::to_string(smallest) + " nodes; the cluster has " +
                           std::to_string(cluster_.size()));
  }
  if (requested_id < 0) {
    return Status::invalid("job id " + std::to_string(requested_id) + " is already taken");
  }
  if (has_placement(spec)) {
    if (auto error = check_placement(spec, cluster_)) return Status::invalid(*error);
  }
  if (requested_id != 0 && (jobs_.count(requested_id) || forgotten_.count(requested_id))) {
    return Status::conflict("job id " + std::to_string(requested_id) + " is already taken");
  }
  if (!spec.extra->dependency.empty()) {
    // sbatch's words for a dependency it cannot take.
    auto parsed = parse_dependency(spec.extra->dependency);
    if (!parsed.ok())
      return Status::invalid("Job dependency problem: " + parsed.status().message());
    for (JobId target : parsed.value().jobs()) {
      bool started = false;
      if (!known_state(target, &started)) {
        return Status::invalid("Job dependency problem: no job " + std::to_string(target));
      }
    }
    spec.extra.edit().dependency = to_string(parsed.value());
  }
  // ---- partition (issue 20 item 1): the default one when none is named.
  if (spec.partition.empty()) {
    spec.partition = partitions_[static_cast<std::size_t>(default_partition_)].spec.name;
  }
  const auto partition = partition_index(spec.partition);
  if (!partition) {
    std::string names;
    for (const Partition& p : partitions_) names += (names.empty() ? "" : ", ") + p.spec.name;
    // sbatch's words, and what there is.
    return Status::invalid("invalid partition specified: " + spec.partition +
                           " (partitions: " + names + ")");
  }
  if (Status admitted = admit_to_partition(partitions_[static_cast<std::size_t>(*partition)], spec);
      !admitted.ok()) {
    return admitted;
  }
  if (spec.qos.empty()) spec.qos = "normal";
  if (!config_.priority.qos.count(spec.qos)) {
    return Status::invalid("Invalid qos specification: " + spec.qos);  // sbatch's words
  }
  // ---- job arrays (issue 18 item 1): one job per index, consecutive ids.
  if (!spec.extra->array.empty()) {
    if (requested_id != 0) return Status::invalid("an array's task ids are not chosen");
    auto array = parse_job_array(spec.extra->array, config_.max_array_size);
    if (!array.ok()) return array.status();
    const JobId first = last_id_ + 1;
    spec.extra.edit().array_job_id = first;
    spec.extra.edit().array_throttle = array->throttle;
    ArrayState& state = arrays_[first];
    state.first = first;
    state.count = array->count();
    state.throttle = array->throttle;
    for (int index : array->indices) {
      JobSpec task = spec;
      task.extra.edit().array_task_id = index;
      add_submitted(std::move(task), last_id_ + 1);
    }
    return first;
  }
  return add_submitted(std::move(spec), requested_id != 0 ? requested_id : last_id_ + 1);
}

JobId Engine::add_submitted(JobSpec&& spec, JobId id) {
  last_id_ = std::max(last_id_, id);
  const bool only_appended = state_version_ == appended_version_;

  auto job = std::make_unique<Job>();
  job->id = id;
  job->spec = std::move(spec);
  job->partition = partition_index(job->spec.partition).value_or(default_partition_);
  job->submit_time = clock_.now();
  if (job->spec.hold) job->hold = HoldKind::User;
  fair_share_.note_user(job->spec.user);
  compute_priority(*job);
  Job& ref = *job;
  pooled_emplace(jobs_, job_nodes_, id, std::move(job));
  enqueue_pending(ref);
  ++active_;

  Event event;
  event.type = EventType::JobSubmitted;
  event.job = id;
  event.to = JobState::Pending;
  event.nodes = ref.spec.nodes;
  emit(std::move(event));
  // A dependency already broken at submit: cancelled now if the config says so.
  refresh_eligibility(ref);
  // Still nothing but appends since the last pass: after every job offered
  // before, or not offered at all (held, waiting for a dependency).
  if (ref.spec.urgent) urgent_since_pass_ = true;
  if (only_appended && ref.state == JobState::Pending &&
      (pending_.is_last_offered(ref) || pending_.is_waiting(ref))) {
    appended_version_ = state_version_;
  }
  request_pass(PassReason::Submit);
  return id;
}

Status Engine::restore_job(const Job& saved, const std::vector<std::string>& nodes) {
  if (is_terminal(saved.state)) {
    return Status::invalid("job " + std::to_string(saved.id) + " has ended");
  }
  if (saved.id <= 0) {
    return Status::invalid("job id " + std::to_string(saved.id) + " is already taken");
  }
  if (jobs_.count(saved.id) || forgotten_.count(saved.id)) {
    return Status::conflict("job id " + std::to_string(saved.id) + " is already taken");
  }
  const bool held = saved.state != JobState::Pending;
  // A job of an invasive partition shares its nodes (issue 20 item 2).
  const bool by_cores = cores_partition(partition_index(saved.spec.partition).value_or(-1));
  std::vector<NodeIndex> allocation;
  if (held) {
    if (nodes.empty()) return Status::invalid("job " + std::to_string(saved.id) + " held no nodes");
    for (const std::string& name : nodes) {
      auto index = cluster_.find(name);
      if (!index) {
        index = cluster_.add_node(name);
        cluster_.set_up(*index, false);  // until its agent registers
      }
      // A suspended job holds none of its nodes: others may run there.
      if (!by_cores && cluster_.node(*index).job != 0 && saved.state != JobState::Suspended) {
        return Status::conflict("node " + name + " is held by job " +
                                std::to_string(cluster_.node(*index).job));
      }
      allocation.push_back(*index);
    }
  }
  // Its cores as journaled (one entry per node, in the nodes' order), where
  // its processes are confined. A journal without them (written before
  // cores were journaled), or whose cores another job holds now: as many
  // are taken again on those nodes (packed as at a start), so that the
  // partition's count stays right.
  CoreSet cores;
  if (by_cores && held && saved.state != JobState::Suspended &&
      saved.run->cores.size() == allocation.size()) {
    for (std::size_t i = 0; i < allocation.size(); ++i) {
      cores.push_back({allocation[i], saved.run->cores[i].cores});
    }
    if (cores_.check(cores)) {
      spdlog::warn("job {}: its journaled cores are taken; it gets as many others there", saved.id);
      cores.clear();
    }
  }
  if (by_cores && held && saved.state != JobState::Suspended && cores.empty()) {
    auto placed = place_cores(cores_, std::max(saved.spec.layout->cores, 1), allocation);
    if (!placed) {
      return Status::conflict("job " + std::to_string(saved.id) + ": its nodes have not " +
                              std::to_string(saved.spec.layout->cores) + " free cores");
    }
    cores = std::move(*placed);
    // In the journaled order: its leader stays first.
    const auto position = [&](NodeIndex n) {
      return std::find(allocation.begin(), allocation.end(), n) - allocation.begin();
    };
    std::sort(cores.begin(), cores.end(), [&](const NodeCores& a, const NodeCores& b) {
      return position(a.node) < position(b.node);
    });
  }
  auto job = std::make_unique<Job>(saved);
  Job& ref = *job;
  ref.version = 1;
  if (!ref.run->cores.empty())
    ref.run.edit().cores.clear();  // set below from `cores` (the saved entries name no node index)
  // Its partition as journaled; one that is no longer configured gives way
  // to the default (the job is kept, not lost).
  if (const auto partition = partition_index(ref.spec.partition)) {
    ref.partition = *partition;
  } else {
    const std::string& fallback =
        partitions_[static_cast<std::size_t>(default_partition_)].spec.name;
    if (!ref.spec.partition.empty()) {
      spdlog::warn("job {}: partition {} is not configured any more; it is in {} now", ref.id,
                   ref.spec.partition, fallback);
    }
    ref.spec.partition = fallback;
    ref.partition = default_partition_;
  }
  ref.allocation.clear();
  if (ref.run->adapting_since != -1) ref.run.edit().adapting_since = -1;
  jobs_.emplace(ref.id, std::move(job));
  last_id_ = std::max(last_id_, ref.id);
  ++active_;
  fair_share_.note_user(ref.spec.user);
  if (!held) {
    ref.start_time = -1;
    ref.end_time = -1;
    compute_priority(ref);
    enqueue_pending(ref);
  } else {
    note_name(ref);
    ref.allocation = allocation;
    ref.allocation_since = clock_.now();
    if (saved.state == JobState::Suspended) {
      // Still frozen on its nodes (its agents say whether its processes are
      // there); the nodes stay free for others meanwhile. The time it was
      // suspended before the restart counts from its saved start.
      ref.state = JobState::Suspended;
      // A job of an invasive partition resumes on its journaled cores.
      if (by_cores && saved.run->cores.size() == allocation.size()) {
        for (std::size_t i = 0; i < allocation.size(); ++i) {
          ref.run.edit().cores.push_back({allocation[i], saved.run->cores[i].cores});
        }
      }
      if (ref.run->suspended_since < 0) ref.run.edit().suspended_since = clock_.now();
      suspended_.insert(ref.id);
    } else {
      // Whatever it was doing (starting, adapting, completing) when the engine
      // stopped, its agents now say whether it runs.
      ref.state = JobState::Running;
      if (ref.run->suspended_since != -1) ref.run.edit().suspended_since = -1;
      if (!cores.empty()) {
        hold_cores(ref, cores);
      } else {
        for (NodeIndex n : allocation) cluster_.assign(n, ref.id);
      }
      add_running(ref);
    }
    if (ref.spec.extra->array_job_id != 0) admit_array_task(ref, true);
  }
  ++state_version_;
  if (!held) refresh_eligibility(ref);  // kill_invalid_depend
  request_pass(PassReason::Manual);
  return {};
}

Status Engine::cancel(JobId id) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  switch (job->state) {
    case JobState::Pending:
      pending_.erase(*job);
      job->end_time = clock_.now();
      --active_;
      transition(*job, JobState::Cancelled, EventType::JobCancelled, "cancelled while pending");
      request_pass(PassReason::Completion);
      return {};
    case JobState::Starting:
    case JobState::Running:
    case JobState::Adapting:
    case JobState::Suspended:
      begin_stop(*job, JobState::Cancelled, StopReason::Cancel);
      return {};
    case JobState::Completing:
      return Status::conflict("job " + std::to_string(id) + " is already ending");
    default:
      return Status::conflict("job " + std::to_string(id) + " has already ended (" +
                              std::string(to_string(job->state)) + ")");
  }
}

void Engine::job_started(JobId id) {
  Job* job = job_mut(id);
  if (!job || job->state != JobState::Starting || waiting_nodes_.count(id)) return;
  transition(*job, JobState::Running, EventType::JobStarted);
  shrink_off_drained(*job, true);  // a node drained while it started
}

void Engine::job_ended(JobId id, int exit_status, const JobEndReport& report) {
  Job* job = job_mut(id);
  if (!job || is_terminal(job->state) || job->state == JobState::Pending) return;
  job->exit_status = exit_status;
  if (!report.reason.empty()) job->run.edit().end_reason = report.reason;
  if (report.max_rss_bytes != job->run->max_rss_bytes)
    job->run.edit().max_rss_bytes = report.max_rss_bytes;
  if (report.cpu_s != job->run->cpu_s) job->run.edit().cpu_s = report.cpu_s;
  if (job->state != JobState::Completing) {
    job->outcome = exit_status == 0 ? JobState::Completed : JobState::Failed;
    transition(*job, JobState::Completing, EventType::JobCompleting);
  }
  finish(*job);
}

void Engine::fail(JobId id, const std::string& why) {
  Job* job = job_mut(id);
  if (!job) return;
  if (job->state == JobState::Starting || job->state == JobState::Running ||
      job->state == JobState::Adapting || job->state == JobState::Suspended) {
    begin_stop(*job, JobState::Failed, StopReason::Failure, why);
  }
}

void Engine::perf_report(JobId id, double mtct) {
  Job* job = job_mut(id);
  if (!job || (job->state != JobState::Running && job->state != JobState::Adapting)) return;
  if (!std::isfinite(mtct) || mtct < 0) return;  // a broken measurement is no data
  // Small moves are noise to a policy: it keeps what it has, and no pass.
  if (!mtct_moved(job->run->mtct, mtct, config_.mtct_refresh_fraction)) return;
  job->run.edit().mtct = mtct;
  touch(*job);
  ++state_version_;
  // Fresh data is what a performance-aware policy waited for.
  request_pass(PassReason::Perf);
}

void Engine::perf_totals(JobId id, double comm_s, double compute_s, bool publish) {
  const Job* job = find_job(id);
  if (!job || (job->state != JobState::Running && job->state != JobState::Adapting)) return;
  if (!std::isfinite(comm_s) || !std::isfinite(compute_s) || comm_s < 0 || compute_s < 0) return;
  auto it = mtct_windows_.find(id);
  if (it == mtct_windows_.end()) {
    auto node = mtct_nodes_.take();
    if (node.empty()) {
      it = mtct_windows_.try_emplace(id, config_.mtct_window_s).first;
    } else {
      node.key() = id;
      node.mapped().reset(config_.mtct_window_s);
      it = mtct_windows_.insert(std::move(node)).position;
    }
  }
  it->second.add(clock_.now(), comm_s, compute_s);
  if (!publish) return;
  if (const auto ratio = it->second.ratio()) perf_report(id, *ratio);
}

void Engine::drop_mtct_window(JobId id) { mtct_nodes_.keep(mtct_windows_.extract(id)); }

Status Engine::resize_request(JobId id, ResizeRequest request) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  if (job->spec.kind != JobKind::Evolving) {
    return Status::invalid("job " + std::to_string(id) + " is " +
                           std::string(to_string(job->spec.kind)) +
                           ", only evolving jobs ask to resize");
  }
  if (job->state != JobState::Running && job->state != JobState::Adapting) {
    return Status::conflict("job " + std::to_string(id) + " is " +
                            std::string(to_string(job->state)));
  }
  const bool expand = request.op == ResizeRequest::Op::Expand;
  const int current = job->size();
  if (expand ? request.nodes <= current : request.nodes >= current) {
    // Right or wrong depends on the size the job holds now.
    return Status::conflict("job " + std::to_string(id) + " holds " + std::to_string(current) +
                            " nodes; cannot " + (expand ? "grow" : "shrink") + " to " +
                            std::to_string(request.nodes));
  }
  if (request.nodes < job->spec.min_nodes || request.nodes > job->spec.max_nodes ||
      !is_allowed_size(job->spec.constraint, request.nodes)) {
    const std::string constraint =
        job->spec.constraint == NodeConstraint::None
            ? std::string()
            : " (" + std::string(to_string(job->spec.constraint)) + " sizes only)";
    return Status::invalid("job " + std::to_string(id) + " takes " +
                           std::to_string(job->spec.min_nodes) + " to " +
                           std::to_string(job->spec.max_nodes) + " nodes" + constraint + ": " +
                           std::to_string(request.nodes) + " is outside its bounds or constraint");
  }
  job->run.edit().request = request;
  touch(*job);
  Event event;
  event.type = EventType::JobRequest;
  event.job = id;
  event.from = event.to = job->state;
  event.prev_nodes = current;
  event.nodes = request.nodes;
  event.message = expand ? "expand" : "shrink";
  emit(std::move(event));
  request_pass(PassReason::Request);
  return {};
}

Status Engine::withdraw_resize_request(JobId id) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  if (!job->run->request)
    return Status::conflict("job " + std::to_string(id) + " asks for nothing");
  if (job->run->request) job->run.edit().request.reset();
  touch(*job);
  ++state_version_;
  return {};
}

void Engine::power_report(JobId id, double watts_per_node) {
  Job* job = job_mut(id);
  if (!job || (job->state != JobState::Running && job->state != JobState::Adapting)) return;
  job->run.edit().power_w = watts_per_node;
  touch(*job);
  ++state_version_;
}

void Engine::tick() {
  // Drain shrinks that waited for a resize hold to pass.
  for (const JobId id : std::vector<JobId>(drain_waits_.begin(), drain_waits_.end())) {
    Job* job = job_mut(id);
    if (!job || (job->state != JobState::Running && job->state != JobState::Adapting)) {
      drain_waits_.erase(id);
    } else if (job->state == JobState::Running) {
      shrink_off_drained(*job, true);
    }
  }
  release_begun();
  recompute_priorities();
  request_pass(PassReason::Tick);
}

void Engine::set_corridor(double lower_w, double upper_w) {
  corridor_lower_w_ = lower_w;
  corridor_upper_w_ = upper_w;
  Event event;
  event.type = EventType::PowerCorridor;
  event.lower_w = lower_w;
  event.upper_w = upper_w;
  emit(std::move(event));
  request_pass(PassReason::Corridor);
}

void Engine::check_power() {
  const bool corridor = corridor_lower_w_ > 0 || corridor_upper_w_ > 0;
  if (!corridor && power_side_.empty()) return;  // the usual case: nothing to sum
  const double watts = cluster_power_w();
  std::string side;
  if (corridor && corridor_upper_w_ > 0 && watts > corridor_upper_w_) side = "above";
  if (corridor && watts < corridor_lower_w_) side = "below";
  if (side == power_side_) return;
  Event event;
  event.type = EventType::PowerViolation;
  event.power_w = watts;
  event.lower_w = corridor_lower_w_;
  event.upper_w = corridor_upper_w_;
  if (!power_side_.empty()) {  // the interval outside ends
    Event end = event;
    end.reason = corridor ? "inside" : "cleared";
    end.message = "cluster power " + std::to_string(static_cast<long>(watts)) + " W: no longer " +
                  power_side_ + " the corridor";
    emit(std::move(end));
  }
  power_side_ = side;
  if (side.empty()) return;
  event.reason = side;
  event.message = "cluster power " + std::to_string(static_cast<long>(watts)) + " W is " + side +
                  " the corridor [" + std::to_string(static_cast<long>(corridor_lower_w_)) + ", " +
                  std::to_string(static_cast<long>(corridor_upper_w_)) + "] W";
  emit(std::move(event));
}

Status Engine::set_node_up(const std::string& name, bool up, const std::string& why) {
  const auto index = cluster_.find(name);
  if (!index) return Status::not_found("no node " + name);
  const Node& node = cluster_.node(*index);
  if (node.up == up) return {};
  cluster_.set_up(*index, up);
  Event event;
  event.type = up ? EventType::NodeUp : EventType::NodeDown;
  event.node = name;
  event.message = why;
  emit(std::move(event));
  if (!up) {
    if (node.promised != 0) {
      if (Job* waiting = job_mut(node.promised)) requeue_waiting_start(*waiting);
    }
    if (node.job == kCoresShared) {
      // An invasive partition's node: every job with cores there goes.
      for (JobId id : core_holders(*index)) {
        Job* holder = job_mut(id);
        if (holder && (holder->state == JobState::Starting || holder->state == JobState::Running ||
                       holder->state == JobState::Adapting)) {
          begin_stop(*holder,
                     config_.requeue_on_node_failure ? JobState::Pending : JobState::Failed,
                     StopReason::NodeFailure);
        }
      }
    } else if (node.job != 0) {
      Job* holder = job_mut(node.job);
      if (holder && (holder->state == JobState::Starting || holder->state == JobState::Running ||
                     holder->state == JobState::Adapting)) {
        begin_stop(*holder, config_.requeue_on_node_failure ? JobState::Pending : JobState::Failed,
                   StopReason::NodeFailure);
      }
    }
    // A suspended job whose node is lost cannot resume there: it goes too.
    std::vector<JobId> lost;
    for (JobId id : suspended_) {
      const Job* held = find_job(id);
      if (held && std::find(held->allocation.begin(), held->allocation.end(), *index) !=
                      held->allocation.end()) {
        lost.push_back(id);
      }
    }
    for (JobId id : lost) {
      begin_stop(*job_mut(id),
                 config_.requeue_on_node_failure ? JobState::Pending : JobState::Failed,
                 StopReason::NodeFailure);
    }
  }
  request_pass(PassReason::Manual);
  return {};
}

Status Engine::set_node_draining(const std::string& name, bool draining, const std::string& why) {
  const auto index = cluster_.find(name);
  if (!index) return Status::not_found("no node " + name);
  const Node& node = cluster_.node(*index);
  if (node.draining == draining) return {};
  cluster_.set_draining(*index, draining);
  Event event;
  event.type = draining ? EventType::NodeDrain : EventType::NodeUp;
  event.node = name;
  if (draining) event.message = why;
  // A malleable job on it is shrunk off it; the event says when it cannot be.
  Job* holder = draining && node.job != 0 && !node.releasing ? job_mut(node.job) : nullptr;
  if (holder && holder->spec.kind == JobKind::Malleable) {
    const std::string why_not = plan_drain_shrink(*holder).why_not;
    if (!why_not.empty()) event.message += (event.message.empty() ? "" : "; ") + why_not;
  }
  emit(std::move(event));
  if (holder) shrink_off_drained(*holder, false);
  request_pass(PassReason::Manual);
  return {};
}

void Engine::extend_limit(Job& job, const Resize& resize, bool ok) {
  const double now = clock_.now();
  if (job.run->adapting_since >= 0) job.run.edit().limit_extension += now - job.run->adapting_since;
  if (job.run->adapting_since != -1) job.run.edit().adapting_since = -1;
  if (!ok || resize.op != Resize::Op::Shrink || job.spec.walltime <= 0) return;
  const double left = job.est_end() - now;
  // A job of an invasive partition runs on its cores: old/new by cores.
  const bool by_cores = resize.cores_to > 0;
  const double from = by_cores ? resize.cores_from : resize.from;
  const double to = by_cores ? resize.cores_to : resize.to;
  if (left > 0 && to > 0) job.run.edit().limit_extension += left * (from / to - 1);
}

void Engine::adaptation_done(JobId id, bool ok) {
  Job* job = job_mut(id);
  auto it = adaptations_.find(id);
  if (!job || it == adaptations_.end() || job->state != JobState::Adapting) return;
  const Resize resize = std::move(it->second);
  adaptations_.erase(it);
  waiting_nodes_.erase(id);  // an expand that ends before all its nodes came
  const int before = job->size();
  account_allocation(*job);
  if (!resize.cores.empty()) {
    finish_resize_cores(*job, resize, ok);
  } else if (ok && resize.op == Resize::Op::Expand) {
    job->allocation.insert(job->allocation.end(), resize.added.begin(), resize.added.end());
    ++job->run.edit().expansions;
    job->run.edit().gain += resize.to - resize.from;
  } else if (ok) {
    std::vector<NodeIndex>& alloc = job->allocation;
    for (NodeIndex n : resize.removed)
      alloc.erase(std::remove(alloc.begin(), alloc.end(), n), alloc.end());
    release_nodes(*job, resize.removed);
    ++job->run.edit().shrinks;
    job->run.edit().gain -= resize.from - resize.to;
  } else if (resize.op == Resize::Op::Expand) {
    release_nodes(*job, resize.added);  // rolled back: the new nodes go back
  } else {
    for (NodeIndex n : resize.removed) {
      const JobId promised = cluster_.node(n).promised;
      if (promised != 0) {
        if (Job* waiting = job_mut(promised)) requeue_waiting_start(*waiting);
      }
      cluster_.keep(n);
    }
  }
  extend_limit(*job, resize, ok);
  if (!ok && config_.resize_backoff_s > 0) {
    job->run.edit().resize_held_until = clock_.now() + config_.resize_backoff_s;
  }
  if (ok) {
    if (job->run->mtct) job->run.edit().mtct.reset();  // MTCT is measured anew at the new size
    drop_mtct_window(id);
  }
  if (ok && job->run->request) {
    // A granted request is done once the job reached the size it asked for.
    const bool expand = job->run->request->op == ResizeRequest::Op::Expand;
    const int size = job->size();
    if (expand ? size >= job->run->request->nodes : size <= job->run->request->nodes)
      job->run.edit().request.reset();
  }
  Event event;
  event.type = EventType::JobResized;
  event.job = id;
  event.from = JobState::Adapting;
  event.to = JobState::Running;
  event.prev_nodes = before;
  job->state = JobState::Running;
  touch(*job);
  event.nodes = job->size();
  event.message = ok ? "" : "adaptation rolled back";
  emit(std::move(event));
  if (drain_waits_.count(id)) shrink_off_drained(*job, true);  // drained while it adapted
  request_pass(PassReason::Adaptation);
}

// ---------------------------------------------------------------- time limits

namespace {

// A job whose limit runs: not while it adapts (the adaptation's time is
// added to the limit when it ends), nor once it is being stopped.
double running_limit(const Job& job) {
  if (job.state != JobState::Starting && job.state != JobState::Running) return -1;
  return job.est_end();
}

}  // namespace

bool Engine::expire_time_limit(JobId id) {
  Job* job = job_mut(id);
  if (!job) return false;
  const double limit = running_limit(*job);
  if (limit < 0 || limit > clock_.now()) return false;
  begin_stop(*job, JobState::Timeout, StopReason::Timeout);
  return true;
}

std::vector<JobId> Engine::expire_time_limits() {
  const double now = clock_.now();
  std::vector<JobId> due;
  for (const auto& [key, job] : running_) {
    const double limit = running_limit(*job);
    if (limit >= 0 && limit <= now) due.push_back(key.second);
  }
  // Stopped after the walk: a stop may change running_.
  std::vector<JobId> stopped;
  for (JobId id : due) {
    if (expire_time_limit(id)) stopped.push_back(id);
  }
  return stopped;
}

std::optional<double> Engine::next_time_limit() const {
  std::optional<double> next;
  for (const auto& [key, job] : running_) {
    const double limit = running_limit(*job);
    if (limit >= 0 && (!next || limit < *next)) next = limit;
  }
  return next;
}

}  // namespace sched
