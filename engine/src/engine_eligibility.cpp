// Which PENDING jobs a pass may offer to the policy: holds, dependencies and
// begin times (docs/design.md §3). Decided when something they depend on
// changes (a job they name changes state, a hold is set or lifted, a begin
// time comes), never by walking the queue, so that a pass over a long queue
// stays as cheap as before.
#include "sched/engine.hpp"

namespace sched {
namespace {

std::pair<std::string, std::string> name_key(const Job& job) {
  return {job.spec.user, job.spec.name};
}

bool has_singleton(const Dependency& dependency) {
  for (const DependencyTerm& term : dependency.terms) {
    if (term.type == DependencyType::Singleton) return true;
  }
  return false;
}

}  // namespace

void Engine::index_names() {
  if (names_indexed_) return;
  names_indexed_ = true;
  for (const auto& [id, job] : jobs_) {
    if (!is_terminal(job->state)) by_name_[name_key(*job)].insert(id);
  }
}

void Engine::note_name(const Job& job) {
  if (names_indexed_) by_name_[name_key(job)].insert(job.id);
}

void Engine::enqueue_pending(Job& job) {
  note_name(job);
  job.dependency = DependencyState::None;
  if (!job.spec.extra->dependency.empty()) {
    auto parsed = parse_dependency(job.spec.extra->dependency);
    if (!parsed.ok()) {
      job.dependency = DependencyState::Never;  // a journal from another version
    } else {
      Dependency& dependency = dependencies_[job.id] = std::move(parsed.value());
      for (JobId target : dependency.jobs()) dependents_[target].push_back(job.id);
      if (has_singleton(dependency)) {
        index_names();  // the first singleton: every job not yet ended, this one too
        singletons_[name_key(job)].insert(job.id);
      }
      evaluate_dependency(job);
    }
  }
  job.before_begin = job.spec.extra->begin_time > clock_.now();
  if (job.before_begin) begin_waits_.emplace(job.spec.extra->begin_time, job.id);
  if (job.spec.extra->array_job_id != 0) admit_array_task(job, false);
  if (waiting_reason(job).empty()) {
    pending_.push(job);
  } else {
    pending_.push_waiting(job);
  }
}

std::optional<JobState> Engine::known_state(JobId id, bool* started) const {
  if (const Job* job = find_job(id)) {
    *started = job->state != JobState::Pending || job->start_time >= 0 || job->run->requeues > 0;
    return job->state;
  }
  if (const auto it = forgotten_.find(id); it != forgotten_.end()) {
    *started = it->second != JobState::Pending;
    return it->second;
  }
  if (!ended_lookup_) return std::nullopt;
  auto state = ended_lookup_(id);
  *started = state && *state != JobState::Pending;
  return state;
}

Satisfaction Engine::singleton_satisfaction(const Job& job) const {
  auto it = by_name_.find(name_key(job));
  if (it == by_name_.end()) return Satisfaction::Satisfied;
  // Slurm's rule: another job of that name and user running, or waiting
  // since before this one (held or not), keeps it waiting.
  for (JobId id : it->second) {
    if (id == job.id) continue;
    const Job* other = find_job(id);
    if (!other || is_terminal(other->state)) continue;
    if (other->state != JobState::Pending || other->id < job.id) return Satisfaction::Waiting;
  }
  return Satisfaction::Satisfied;
}

void Engine::evaluate_dependency(Job& job) {
  auto it = dependencies_.find(job.id);
  if (it == dependencies_.end()) return;
  std::vector<Satisfaction> terms;
  for (const DependencyTerm& term : it->second.terms) {
    if (term.type == DependencyType::Singleton) {
      terms.push_back(singleton_satisfaction(job));
      continue;
    }
    std::vector<Satisfaction> parts;
    // An array's id stands for all its tasks (Slurm).
    std::vector<JobId> targets;
    for (JobId target : term.jobs) {
      auto array = arrays_.find(target);
      if (array == arrays_.end() || array->second.count <= 1) {
        targets.push_back(target);
        continue;
      }
      for (JobId id = target; id < target + array->second.count; ++id) targets.push_back(id);
    }
    for (JobId target : targets) {
      bool started = false;
      const std::optional<JobState> state = known_state(target, &started);
      // A job nobody knows any more (a journal that lost it) never ends.
      Satisfaction part = state ? satisfaction(term.type, *state, started) : Satisfaction::Never;
      // A job that never may start will neither start nor succeed: what
      // waits for that is never satisfied either (a pipeline breaks whole).
      const Job* waits = find_job(target);
      if (part == Satisfaction::Waiting && waits && waits->state == JobState::Pending &&
          waits->dependency == DependencyState::Never &&
          (term.type == DependencyType::AfterOk || term.type == DependencyType::After)) {
        part = Satisfaction::Never;
      }
      parts.push_back(part);
    }
    terms.push_back(combine(parts, /*any=*/false));
  }
  DependencyState now = DependencyState::Waiting;
  switch (combine(terms, it->second.any)) {
    case Satisfaction::Satisfied:
      now = DependencyState::Satisfied;
      break;
    case Satisfaction::Never:
      now = DependencyState::Never;
      break;
    case Satisfaction::Waiting:
      break;
  }
  if (job.dependency != now) {
    job.dependency = now;
    touch(job);
    ++state_version_;
    if (now == DependencyState::Never) decide_dependents(job.id);
  }
}

void Engine::decide_dependents(JobId id) {
  auto it = dependents_.find(id);
  if (it == dependents_.end()) return;
  // A copy: deciding one job may end another (kill_invalid_depend), which
  // comes back here.
  const std::vector<JobId> waiting = it->second;
  for (JobId other : waiting) {
    if (other == id) continue;
    Job* dependent = job_mut(other);
    if (!dependent || dependent->state != JobState::Pending || !dependencies_.count(other)) {
      continue;
    }
    evaluate_dependency(*dependent);
    refresh_eligibility(*dependent);
  }
}

void Engine::refresh_eligibility(Job& job) {
  if (job.state != JobState::Pending) return;
  if (job.dependency == DependencyState::Never && config_.kill_invalid_depend) {
    forget_pending(job);
    pending_.erase(job);
    job.end_time = clock_.now();
    job.run.edit().end_reason = "DependencyNeverSatisfied";
    --active_;
    transition(job, JobState::Cancelled, EventType::JobCancelled,
               "DependencyNeverSatisfied: " + job.spec.extra->dependency);
    request_pass(PassReason::Completion);
    return;
  }
  const bool waiting = !waiting_reason(job).empty();
  if (waiting == pending_.is_waiting(job)) return;
  pending_.erase(job);
  if (waiting) {
    pending_.push_waiting(job);
  } else {
    pending_.push(job);
    request_pass(PassReason::Manual);
  }
  touch(job);
  ++state_version_;
}

void Engine::forget_pending(const Job& job) {
  dependencies_.erase(job.id);
  if (auto it = singletons_.find(name_key(job)); it != singletons_.end()) {
    it->second.erase(job.id);
    if (it->second.empty()) singletons_.erase(it);
  }
  begin_waits_.erase({job.spec.extra->begin_time, job.id});
}

void Engine::on_state_change(const Job& job) {
  const JobId id = job.id;
  const bool ended = is_terminal(job.state);
  if (ended && names_indexed_) {
    if (auto it = by_name_.find(name_key(job)); it != by_name_.end()) {
      it->second.erase(id);
      if (it->second.empty()) by_name_.erase(it);
    }
  }
  decide_dependents(id);
  // A task of an array: what waits for the whole array is decided anew.
  const JobId array_id = job.spec.extra->array_job_id;
  if (array_id != 0 && array_id != id && dependents_.count(array_id)) decide_dependents(array_id);
  // An ended job changes no more; an array's id still stands for its other tasks.
  if (ended && !(array_id == id && arrays_.count(id) && arrays_.at(id).count > 1)) {
    dependents_.erase(id);
  }
  if (singletons_.empty()) return;  // the common case: no name to look up
  auto it = singletons_.find(name_key(job));
  if (it == singletons_.end()) return;
  const std::vector<JobId> waiting(it->second.begin(), it->second.end());  // as above
  for (JobId other : waiting) {
    if (other == id) continue;
    Job* dependent = job_mut(other);
    if (!dependent || dependent->state != JobState::Pending || !dependencies_.count(other)) {
      continue;
    }
    evaluate_dependency(*dependent);
    refresh_eligibility(*dependent);
  }
}

void Engine::release_begun() {
  const double now = clock_.now();
  while (!begin_waits_.empty() && begin_waits_.begin()->first <= now) {
    const JobId id = begin_waits_.begin()->second;
    begin_waits_.erase(begin_waits_.begin());
    Job* job = job_mut(id);
    if (!job || job->state != JobState::Pending) continue;
    job->before_begin = false;
    touch(*job);
    ++state_version_;
    refresh_eligibility(*job);
  }
}

std::optional<double> Engine::next_begin_time() const {
  if (begin_waits_.empty()) return std::nullopt;
  return begin_waits_.begin()->first;
}

// ---------------------------------------------------------------- holds

Status Engine::hold(JobId id, bool admin) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  if (job->state != JobState::Pending) {
    return Status::conflict("job " + std::to_string(id) + " is " +
                            std::string(to_string(job->state)) + ": only pending jobs are held");
  }
  // An admin's hold stays an admin's when its owner holds it too.
  const HoldKind kind = admin || job->hold == HoldKind::Admin ? HoldKind::Admin : HoldKind::User;
  if (job->hold == kind) return {};
  job->hold = kind;
  touch(*job);
  Event event;
  event.type = EventType::JobHeld;
  event.job = id;
  event.from = event.to = JobState::Pending;
  event.nodes = job->spec.nodes;
  event.message = kind == HoldKind::Admin ? "JobHeldAdmin" : "JobHeldUser";
  emit(std::move(event));
  refresh_eligibility(*job);
  return {};
}

Status Engine::release(JobId id) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  if (job->state != JobState::Pending || job->hold == HoldKind::None) {
    return Status::conflict("job " + std::to_string(id) + " is not held");
  }
  job->hold = HoldKind::None;
  touch(*job);
  Event event;
  event.type = EventType::JobReleased;
  event.job = id;
  event.from = event.to = JobState::Pending;
  event.nodes = job->spec.nodes;
  emit(std::move(event));
  refresh_eligibility(*job);
  return {};
}

Status Engine::requeue(JobId id) {
  Job* job = job_mut(id);
  if (!job) return Status::not_found("no job " + std::to_string(id));
  switch (job->state) {
    case JobState::Starting:
    case JobState::Running:
    case JobState::Adapting:
    case JobState::Suspended:
      begin_stop(*job, JobState::Pending, StopReason::Requeue, "requeued");
      return {};
    case JobState::Pending:
      return Status::conflict("job " + std::to_string(id) +
                              " is pending: only a running job can be requeued");
    case JobState::Completing:
      return Status::conflict("job " + std::to_string(id) + " is already ending");
    default:
      return Status::conflict("job " + std::to_string(id) + " has already ended (" +
                              std::string(to_string(job->state)) + ")");
  }
}

}  // namespace sched
