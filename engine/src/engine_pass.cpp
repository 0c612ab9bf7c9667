// The scheduling pass and the enactment of its accepted actions.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "sched/core_resize.hpp"
#include "sched/engine.hpp"
#include "sched/shrink_choice.hpp"

namespace sched {

void Engine::request_pass(PassReason reason) {
  // A tick is the weakest reason: any other event at the same instant names the
  // pass.
  if (!due_ || *due_ == PassReason::Tick) due_ = reason;
}

bool Engine::run_pass_if_due() {
  if (!due_) return false;
  const PassReason reason = *due_;
  due_.reset();
  bool time_dependent = policy_ && policy_->time_dependent();
  if (partitioned_) {
    time_dependent = false;
    for (const Partition &p : partitions_) {
      const Policy *policy = p.policy ? p.policy.get() : policy_.get();
      time_dependent = time_dependent || (policy && policy->time_dependent());
    }
  }
  if (reason == PassReason::Tick && !time_dependent && state_version_ == version_at_last_pass_) {
    return false;  // nothing changed, and no policy looks at the clock
  }
  if (pass_cannot_act()) return false;
  run_pass(reason);
  return true;
}

void Engine::run_pass(PassReason reason) {
  due_.reset();
  if (in_pass_) return;
  if (!partitioned_) {
    // One partition holding every node: the one pass there always was.
    if (policy_) run_policy_pass(reason, -1, policy_);
    return;
  }
  // Each partition's pass in turn, each by its own policy over its own jobs
  // and nodes; a down partition starts nothing. One partition's failure
  // drops its own actions only.
  bool failed = false;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    if (partitions_[i].spec.state == PartitionState::Down) continue;
    const std::shared_ptr<Policy> policy = partitions_[i].policy ? partitions_[i].policy : policy_;
    if (policy && !run_policy_pass(reason, static_cast<int>(i), policy)) failed = true;
  }
  // A partition whose pass failed decided nothing: the next tick tries again.
  if (failed) version_at_last_pass_ = ~std::uint64_t{0};
}

bool Engine::run_policy_pass(PassReason reason, int partition,
                             const std::shared_ptr<Policy> &policy) {
  in_pass_ = true;
  const double t0 = clock_.monotonic();
  PassContext ctx(*this, reason, /*dry=*/false, partition);
  // Incremental passes (ctx.appended) are the whole cluster's only: a
  // partition's pass sees a part of the queue, so it is told nothing.
  if (partition < 0 && policy.get() == last_pass_policy_ && state_version_ == appended_version_ &&
      no_estimate_passed()) {
    ctx.set_appended(pending_after_pass_);
  }
  const std::optional<PolicyFailure> error = call_schedule(*policy, ctx);
  std::size_t enacted = 0;
  if (!error) {
    // Placed starts first: their nodes were picked among the idle ones,
    // which the other starts (any nodes) must leave to them.
    for (const bool placed : {true, false}) {
      for (const Action &action : ctx.actions()) {
        if (action.placement.empty() == placed) continue;
        try {
          enact(action);
          ++enacted;
        } catch (const std::exception &e) {
          // A checked action that cannot be carried out is an engine bug;
          // the engine must still go on with the rest.
          spdlog::error("enacting {} of job {}: {}", static_cast<int>(action.type), action.job,
                        e.what());
        }
      }
    }
  }
  in_pass_ = false;
  const double elapsed = clock_.monotonic() - t0;

  ++stats_.passes;
  stats_.actions += enacted;
  stats_.last_s = elapsed;
  stats_.total_s += elapsed;
  stats_.max_s = std::max(stats_.max_s, elapsed);
  for (int code = 0; ctx.refusal_total() > 0 && code < kRefusalCodeCount; ++code) {
    const auto n = static_cast<std::uint64_t>(ctx.refusal_counts()[static_cast<std::size_t>(code)]);
    stats_.refusals_by_code[static_cast<std::size_t>(code)] += n;
    stats_.refusals += n;
  }
  Partition *own = partition >= 0 && partitions_[static_cast<std::size_t>(partition)].policy
                       ? &partitions_[static_cast<std::size_t>(partition)]
                       : nullptr;
  if (own) {
    if (error) {
      note_partition_failure(*own, *error);
    } else {
      own->consecutive_failed = 0;
      own->last_good = own->policy;
    }
  } else if (error) {
    note_pass_failure(*error);
  } else {
    stats_.consecutive_failed = 0;
    last_good_ = policy_;
  }
  Event pass;
  pass.type = EventType::SchedPass;
  pass.pass_s = elapsed;
  pass.actions = static_cast<int>(enacted);
  pass.reason = std::string(to_string(reason));
  if (partitioned_ && partition >= 0) {
    pass.partition = partitions_[static_cast<std::size_t>(partition)].spec.name;
  }
  emit(std::move(pass));
  // A failed pass decided nothing: the next tick tries again even when the
  // policy is not time-dependent (and so counts towards a revert).
  if (!error) {
    urgent_since_pass_ = false;
    version_at_last_pass_ = appended_version_ = state_version_;
    pending_after_pass_ = pending_.size();
    last_pass_policy_ = partition < 0 ? policy.get() : nullptr;
  } else {
    last_pass_policy_ = nullptr;
  }
  return !error;
}

bool Engine::pass_cannot_act() const {
  // The policy's promise (Policy::idle_nodes_only), when the engine can
  // tell the state is its last pass's but for jobs appended to the queue
  // (what ctx.appended says) and no node is idle: its decisions about the
  // old jobs stand, and a new job cannot start without an idle node. An
  // urgent job may preempt to start: its submission's pass always runs.
  return !partitioned_ && policy_ && policy_->idle_nodes_only() && !urgent_since_pass_ &&
         policy_.get() == last_pass_policy_ && state_version_ == appended_version_ &&
         cluster_.idle_count() == 0 && no_estimate_passed();
}

bool Engine::no_estimate_passed() const {
  // A running job past its estimated end (one still adapting, not yet
  // stopped at its limit) counts as ending now: what a policy worked out
  // from the estimates then moves with the clock.
  const double now = clock_.now();
  for (const auto &[key, job] : running_) {
    const double end = job->est_end();
    if (end >= 0 && end < now) return false;
  }
  return true;
}

void Engine::note_pass_failure(const PolicyFailure &failure) {
  ++stats_.failed;
  ++stats_.consecutive_failed;
  PolicyFailure error = failure;
  error.time = clock_.now();
  stats_.last_failure = error;
  const int limit = config_.revert_after_failures;
  const bool give_up = limit > 0 && stats_.consecutive_failed >= limit;
  std::string what = policy_->name() + ": " + error.message + " (pass dropped)";
  if (give_up && !has_fallback_policy()) {
    // Nothing to go back to: keep trying this one, and say so every time.
    what += "; " + std::to_string(stats_.consecutive_failed) +
            " passes in a row failed and no other policy has completed a pass: nothing to "
            "revert to";
    if (stats_.consecutive_failed == limit) spdlog::error("policy {}", what);
  }
  emit(policy_error_event(error, what));
  if (!give_up || !has_fallback_policy()) return;

  PolicyRevert revert;
  revert.time = error.time;
  revert.from = policy_->name();
  revert.to = last_good_->name();
  revert.failures = stats_.consecutive_failed;
  set_policy(last_good_);
  ++stats_.reverts;
  Event event = policy_error_event(error, "");
  event.type = EventType::PolicyReverted;
  event.message = "policy " + revert.from + " failed " + std::to_string(revert.failures) +
                  " passes in a row (last: " + error.message + "); reverted to " + revert.to +
                  ", the last policy that completed a pass";
  spdlog::warn("{}", event.message);
  revert.message = event.message;
  stats_.last_revert = std::move(revert);
  emit(std::move(event));
  request_pass(PassReason::Manual);  // the jobs the failures held back start now
}

std::optional<PolicyFailure> Engine::call_schedule(Policy &policy, PassContext &ctx) {
  // While schedule runs, events are not handed to the policy's on_event.
  const bool was_busy = policy_busy_;
  policy_busy_ = true;
  std::optional<PolicyFailure> error;
  try {
    error = policy.schedule(ctx);
  } catch (const std::exception &e) {
    // A policy that throws instead of returning its failure still only fails the pass.
    error =
        PolicyFailure{PolicyFailureCode::Runtime, std::string("policy raised: ") + e.what(), "", 0};
  }
  policy_busy_ = was_busy;
  return error;
}

// ---------------------------------------------------------------- enactment

void Engine::enact(const Action &action) {
  Job *job = job_mut(action.job);
  if (!job) return;
  switch (action.type) {
    case Action::Type::Start:
      if (!action.cores.empty()) {
        enact_start_cores(*job, action.cores);
        break;
      }
      enact_start(*job, action.nodes, action.placement);
      break;
    case Action::Type::Expand:
    case Action::Type::Shrink:
      if (!action.cores.empty()) {
        enact_resize_cores(*job, action.nodes, action.cores);
        break;
      }
      enact_resize(*job, action.nodes, action.leaving);
      break;
    case Action::Type::RequestPerf:
      if (job->state == JobState::Running) enactor_.request_perf(*job);
      break;
    case Action::Type::Preempt:
      if (job->state == JobState::Running) {
        begin_stop(*job,
                   action.mode == PreemptMode::Requeue ? JobState::Pending : JobState::Cancelled,
                   StopReason::Preempt);
      }
      break;
    case Action::Type::Suspend:
      if (job->state == JobState::Running) enact_suspend(*job);
      break;
    case Action::Type::Resume:
      if (job->state == JobState::Suspended) enact_resume(*job);
      break;
    case Action::Type::Reserve:
      if (job->state == JobState::Pending &&
          (!job->run->expected_start || *job->run->expected_start != action.time)) {
        job->run.edit().expected_start = action.time;
        touch(*job);
        Event event;
        event.type = EventType::JobReserved;
        event.job = job->id;
        event.from = event.to = JobState::Pending;
        event.expected_start = action.time;
        emit(std::move(event));
      }
      break;
  }
}

void Engine::enact_start(Job &job, int nodes, const std::vector<NodeIndex> &placement) {
  std::vector<NodeIndex> promised;
  if (!placement.empty()) {
    for (NodeIndex node : placement) cluster_.assign(node, job.id);
    job.allocation = placement;
  } else {
    job.allocation = cluster_.allocate(job.id, nodes, &promised, partitioned_ ? job.partition : -1);
  }
  job.allocation.insert(job.allocation.end(), promised.begin(), promised.end());
  pending_.erase(job);
  if (job.run->expected_start) job.run.edit().expected_start.reset();
  transition(job, JobState::Starting, EventType::JobStarting);
  if (!promised.empty()) {
    waiting_nodes_[job.id] = static_cast<int>(promised.size());
    return;  // launched once the promised nodes are free
  }
  launch_if_ready(job.id);
}

void Engine::enact_resize(Job &job, int to, const std::vector<NodeIndex> &leaving,
                          const std::string &why) {
  Resize resize;
  resize.from = job.size();
  resize.to = to;
  if (to > resize.from) {
    resize.op = Resize::Op::Expand;
    std::vector<NodeIndex> promised;
    resize.added =
        cluster_.allocate(job.id, to - resize.from, &promised, partitioned_ ? job.partition : -1);
    resize.added.insert(resize.added.end(), promised.begin(), promised.end());
    if (!promised.empty()) waiting_nodes_[job.id] = static_cast<int>(promised.size());
  } else {
    resize.op = Resize::Op::Shrink;
    // The nodes picked when the shrink was checked; the leader never leaves.
    resize.removed = leaving;
    if (static_cast<int>(leaving.size()) != resize.from - to) {
      resize.removed = default_shrink_nodes(cluster_, job, resize.from - to);
    }
    for (NodeIndex n : resize.removed) cluster_.mark_releasing(n);
  }
  adaptations_[job.id] = resize;
  std::string message = (resize.op == Resize::Op::Expand ? "expand " : "shrink ") +
                        std::to_string(resize.from) + " -> " + std::to_string(to);
  if (!why.empty()) message += ": " + why;
  transition(job, JobState::Adapting, EventType::JobAdapting, std::move(message));
  launch_if_ready(job.id);
}

void Engine::enact_suspend(Job &job) {
  // Its nodes are free at once: the enactor freezes the processes before
  // anything else is launched there (in schedd its messages leave first).
  account_allocation(job);
  if (!job.run->cores.empty()) {
    suspend_cores(job);
  } else {
    for (NodeIndex n : job.allocation) cluster_.release(n);
  }
  drop_running(job);
  suspended_.insert(job.id);
  job.run.edit().suspended_since = clock_.now();
  ++job.run.edit().suspensions;
  transition(job, JobState::Suspended, EventType::JobSuspended);
  enactor_.suspend(job);
}

void Engine::enact_resume(Job &job) {
  if (!job.run->cores.empty()) {
    resume_cores(job);
  } else {
    for (NodeIndex n : job.allocation) cluster_.assign(n, job.id);
  }
  suspended_.erase(job.id);
  // The limit did not run while it was suspended.
  const double now = clock_.now();
  if (job.run->suspended_since >= 0)
    job.run.edit().limit_extension += now - job.run->suspended_since;
  if (job.run->suspended_since != -1) job.run.edit().suspended_since = -1;
  job.allocation_since = now;
  add_running(job);
  transition(job, JobState::Running, EventType::JobResumed);
  enactor_.resume(job);
}

void Engine::launch_if_ready(JobId id) {
  if (waiting_nodes_.count(id)) return;
  Job *job = job_mut(id);
  if (!job) return;
  if (job->state == JobState::Starting) {
    job->start_time = clock_.now();
    job->allocation_since = job->start_time;
    // A resizable job started below its requested size runs slower through
    // no fault of its own: its limit stretches as a shrink's would.
    if (job->run->limit_extension != 0) job->run.edit().limit_extension = 0;
    if (job->run->adapting_since != -1) job->run.edit().adapting_since = -1;
    const int held = core_count(job->run->cores);  // a job of an invasive partition: by cores
    if (is_resizable(job->spec.kind) && held > 0 && held < job->spec.layout->cores) {
      job->run.edit().limit_extension =
          job->spec.walltime * (static_cast<double>(job->spec.layout->cores) / held - 1);
    } else if (is_resizable(job->spec.kind) && held == 0 && job->size() > 0 &&
               job->size() < job->spec.nodes) {
      job->run.edit().limit_extension =
          job->spec.walltime * (static_cast<double>(job->spec.nodes) / job->size() - 1);
    }
    add_running(*job);
    touch(*job);
    enactor_.start(*job);
  } else if (job->state == JobState::Adapting) {
    auto it = adaptations_.find(id);
    if (it != adaptations_.end()) {
      job->run.edit().adapting_since = clock_.now();
      enactor_.resize(*job, it->second);
    }
  }
}

void Engine::begin_stop(Job &job, JobState outcome, StopReason reason, std::string why) {
  if (job.state == JobState::Starting && waiting_nodes_.count(job.id)) {
    // Never launched (still waiting for promised nodes): nothing to kill.
    requeue_waiting_start(job);
    if (outcome == JobState::Cancelled) (void)cancel(job.id);  // pending now: cannot fail
    return;
  }
  if (job.state == JobState::Suspended) {
    // Its nodes are not its own any more: only its frozen processes go
    // (finish leaves the nodes to whoever holds them now).
    suspended_.erase(job.id);
  }
  job.outcome = outcome;
  // Why it ends, for `sched show` and `sched acct` (issue 18 item 6), when
  // its node has not said more already; a node's own report (job_ended)
  // still replaces it.
  if (job.run->end_reason.empty() && outcome != JobState::Pending) {
    if (reason == StopReason::Timeout) {
      job.run.edit().end_reason = "time limit reached";
    } else if (reason == StopReason::NodeFailure) {
      job.run.edit().end_reason = "a node of the job was lost";
    } else if (reason == StopReason::Failure) {
      job.run.edit().end_reason = why;
    }
  }
  const bool suspended = job.state == JobState::Suspended;
  transition(job, JobState::Completing, EventType::JobCompleting, std::move(why));
  if (!suspended && job.run->cores.empty()) {  // cores are given back at the end (finish)
    for (NodeIndex n : job.allocation) cluster_.mark_releasing(n);
  }
  enactor_.stop(job, reason);
}

void Engine::finish(Job &job) {
  const bool was_suspended = job.run->suspended_since >= 0;
  if (was_suspended) job.allocation_since = clock_.now();  // it held no nodes since
  account_allocation(job);
  std::vector<NodeIndex> nodes = std::move(job.allocation);
  job.allocation.clear();
  if (auto it = adaptations_.find(job.id); it != adaptations_.end()) {
    // An expansion by cores under way: the cores it took go back too.
    if (it->second.op == Resize::Op::Expand) add_cores(job.run.edit().cores, it->second.cores);
    nodes.insert(nodes.end(), it->second.added.begin(), it->second.added.end());
    adaptations_.erase(it);
  }
  waiting_nodes_.erase(job.id);
  drain_waits_.erase(job.id);
  drop_mtct_window(job.id);
  drop_running(job);
  if (was_suspended) {
    suspended_.erase(job.id);
    nodes.clear();  // ended while suspended: it held none of them
    if (job.run->suspended_since != -1) job.run.edit().suspended_since = -1;
  }
  if (!job.run->cores.empty()) {
    release_cores(job);
  } else {
    release_nodes(job, nodes);
  }
  job.end_time = clock_.now();
  if (job.run->request) job.run.edit().request.reset();  // asked by the processes that are now gone
  if (job.run->mtct) job.run.edit().mtct.reset();
  if (job.outcome == JobState::Pending) {
    ++job.run.edit().requeues;
    job.start_time = -1;
    job.end_time = -1;
    pending_.push(job);
    transition(job, JobState::Pending, EventType::JobRequeued);
  } else {
    --active_;
    // Fair share: what it consumed, all its runs (requeued ones included).
    fair_share_.charge(job.spec.user, job.spec.extra->account, job.node_seconds, job.end_time);
    EventType type = EventType::JobCompleted;
    if (job.outcome == JobState::Failed) type = EventType::JobFailed;
    if (job.outcome == JobState::Cancelled) type = EventType::JobCancelled;
    if (job.outcome == JobState::Timeout) type = EventType::JobTimeout;
    transition(job, job.outcome, type);
  }
  request_pass(PassReason::Completion);
}

void Engine::release_nodes(Job &job, const std::vector<NodeIndex> &nodes) {
  std::vector<JobId> handed_to;  // stays empty (no allocation) unless nodes were promised
  cluster_.release_held(job.id, nodes, handed_to);
  // Launched only once every node is given back (nothing a launch does
  // reads the nodes), in the order their last nodes came.
  for (const JobId next : handed_to) {
    auto it = waiting_nodes_.find(next);
    if (it != waiting_nodes_.end() && --it->second == 0) {
      waiting_nodes_.erase(it);
      launch_if_ready(next);
    }
  }
}

void Engine::requeue_waiting_start(Job &job) {
  if (job.state == JobState::Adapting) {
    // An expand waiting for promised nodes that will not come: roll it back.
    // The job keeps its own allocation; only the nodes it was to gain go.
    if (!waiting_nodes_.count(job.id)) return;  // already under way: not ours to undo
    if (auto it = adaptations_.find(job.id); it != adaptations_.end()) {
      for (NodeIndex n : it->second.added) {
        if (cluster_.node(n).job == job.id) {
          cluster_.release(n);
        } else if (cluster_.node(n).promised == job.id) {
          cluster_.unpromise(n);
        }
      }
      adaptations_.erase(it);
    }
    waiting_nodes_.erase(job.id);
    Event event;
    event.type = EventType::JobResized;
    event.job = job.id;
    event.from = JobState::Adapting;
    event.to = JobState::Running;
    event.prev_nodes = event.nodes = job.size();
    event.message = "expand rolled back: promised nodes did not come";
    job.state = JobState::Running;
    touch(job);
    emit(std::move(event));
    request_pass(PassReason::Manual);
    return;
  }
  // Give back what the job holds and withdraw what was promised to it.
  for (NodeIndex n : job.allocation) {
    if (cluster_.node(n).job == job.id) {
      cluster_.release(n);
    } else if (cluster_.node(n).promised == job.id) {
      cluster_.unpromise(n);
    }
  }
  waiting_nodes_.erase(job.id);
  job.allocation.clear();
  if (job.state == JobState::Starting) {
    job.state = JobState::Pending;  // never launched: back to the queue as it was
    touch(job);
    pending_.push(job);
    Event event;
    event.type = EventType::JobRequeued;
    event.job = job.id;
    event.from = JobState::Starting;
    event.to = JobState::Pending;
    event.message = "promised nodes did not come";
    emit(std::move(event));
  }
  request_pass(PassReason::Manual);
}

}  // namespace sched
