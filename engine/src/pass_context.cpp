#include "sched/pass_context.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "sched/constraints.hpp"
#include "sched/core_resize.hpp"
#include "sched/engine.hpp"
#include "sched/placement.hpp"
#include "sched/shrink_choice.hpp"

namespace sched {

std::string_view to_string(PassReason reason) {
  static constexpr std::array<std::string_view, 8> names = {
      "tick", "submit", "completion", "adaptation", "request", "perf", "corridor", "manual"};
  return names[static_cast<std::size_t>(reason)];
}

PassContext::PassContext(Engine& engine, PassReason reason, bool dry, int partition)
    : engine_(engine),
      reason_(reason),
      dry_(dry),
      partition_(partition),
      idle_(partition < 0 ? engine.cluster().idle_count()
                          : engine.cluster().idle_count(partition)) {
  PassContext::Scratch& spare = engine.pass_scratch_;
  marks_.swap(spare.marks);
  actions_.swap(spare.actions);
  pending_.swap(spare.pending);
  releases_.swap(spare.releases);
  starts_.swap(spare.starts);
  // An invasive partition: a node with a free core is one a job may start on.
  if (engine.cores_partition(partition)) idle_ = nodes_with_free_cores();
}

PassContext::~PassContext() {
  // Emptied, the containers keep their capacity for the next pass (a nested
  // pass found the engine's spare ones taken and made its own: either set
  // is as good).
  PassContext::Scratch& spare = engine_.pass_scratch_;
  while (!marks_.empty()) spare.mark_nodes.keep(marks_.extract(marks_.begin()));
  // Clearing a map empties every bucket: a rare huge pass's are not kept.
  if (marks_.bucket_count() > 1024) marks_ = {};
  marks_.clear();
  actions_.clear();
  pending_.clear();
  releases_.clear();
  starts_.clear();
  marks_.swap(spare.marks);
  actions_.swap(spare.actions);
  pending_.swap(spare.pending);
  releases_.swap(spare.releases);
  starts_.swap(spare.starts);
}

PassContext::Mark& PassContext::mark_of(JobId id) {
  const auto it = marks_.find(id);
  if (it != marks_.end()) return it->second;
  return pooled_emplace(marks_, engine_.pass_scratch_.mark_nodes, id, Mark{}).first->second;
}

int PassContext::nodes_with_free_cores() {
  int n = 0;
  const CoreMap& map = core_map();
  for (NodeIndex node : core_candidates()) n += map.free_count(node) > 0 ? 1 : 0;
  return n;
}

const std::string& PassContext::partition_name() const {
  static const std::string kAll;
  if (partition_ < 0) return kAll;
  return engine_.partitions().at(static_cast<std::size_t>(partition_)).spec.name;
}

double PassContext::now() const { return engine_.now(); }

int PassContext::nodes_total() const {
  return partition_ < 0 ? engine_.cluster().size() : engine_.cluster().partition_size(partition_);
}

PowerView PassContext::power() const { return engine_.power(); }

std::size_t PassContext::pending_count() const {
  if (partition_ < 0) return engine_.pending_queue().size();
  // A partition's share of the queue is counted by walking it once per pass
  // (the queue is one for the cluster; its order is every partition's order).
  if (!pending_total_) {
    std::size_t n = 0;
    auto cursor = engine_.pending_queue().cursor();
    while (const Job* job = cursor.next()) n += mine(*job) ? 1 : 0;
    pending_total_ = n;
  }
  return *pending_total_;
}

const Job* PassContext::pending_at(std::size_t index) {
  if (!pending_cursor_) pending_cursor_.emplace(engine_.pending_queue().cursor());
  while (pending_.size() <= index && !pending_complete_) {
    const Job* job = pending_cursor_->next();
    if (!job) {
      pending_complete_ = true;
      break;
    }
    if (mine(*job)) pending_.push_back(job);
  }
  return index < pending_.size() ? pending_[index] : nullptr;
}

const std::vector<const Job*>& PassContext::pending() {
  pending_at(pending_count());
  return pending_;
}

std::size_t PassContext::running_count() const {
  if (partition_ < 0) return engine_.running_jobs_count();
  std::size_t n = 0;
  for (const Job* job : engine_.running_jobs()) n += mine(*job) ? 1 : 0;
  return n;
}

namespace {

std::vector<const Job*> of_partition(std::vector<const Job*> jobs, int partition) {
  if (partition < 0) return jobs;
  std::erase_if(jobs, [partition](const Job* job) { return job->partition != partition; });
  return jobs;
}

}  // namespace

const std::vector<const Job*>& PassContext::running() {
  if (!running_) running_ = of_partition(engine_.running_jobs(), partition_);
  return *running_;
}

const std::vector<const Job*>& PassContext::suspended() {
  if (!suspended_) suspended_ = of_partition(engine_.suspended_jobs(), partition_);
  return *suspended_;
}

Verdict PassContext::refuse_other_partition(const Job& job) {
  return refuse(RefusalCode::Partition, job.id, 0, 0,
                "it is in partition " + job.spec.partition + ", this pass is partition " +
                    partition_name() + "'s");
}

void PassContext::init_placed() {
  if (!placed_.empty()) return;
  const Cluster& cluster = engine_.cluster();
  placed_.assign(static_cast<std::size_t>(cluster.size()), false);
  if (partition_ < 0) return;
  for (std::size_t i = 0; i < placed_.size(); ++i) {
    placed_[i] = cluster.node(static_cast<NodeIndex>(i)).partition != partition_;
  }
}

const Job* PassContext::job(JobId id) const { return engine_.find_job(id); }

const Cluster& PassContext::cluster() const { return engine_.cluster(); }

const PendingQueue& PassContext::pending_queue() const { return engine_.pending_queue(); }

std::optional<std::span<const JobId>> PassContext::touched_since(std::uint64_t from) const {
  return engine_.touched_since(from);
}

std::uint64_t PassContext::touched_end() const { return engine_.touched_end(); }

int PassContext::tentative_size(const Job& job) const {
  auto it = marks_.find(job.id);
  if (it != marks_.end() && it->second.resize_to > 0) return it->second.resize_to;
  if (it != marks_.end() && it->second.preempted) return 0;
  return job.size();
}

void PassContext::collect_releases() {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const double t = now();
  releases_.clear();
  for (const Job* job : running()) {
    const int size = tentative_size(*job);
    if (size <= 0) continue;
    const double end = job->est_end();
    releases_.emplace_back(end >= 0 ? std::max(end, t) : kNever, size);
  }
  append_pass_starts(releases_);
  // By time only: both readers add up what is freed at one time, so the
  // order within a time does not matter, and the comparison is cheaper.
  std::sort(releases_.begin(), releases_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

void PassContext::append_pass_starts(std::vector<std::pair<double, int>>& out) const {
  // A job this pass started frees its nodes at its limit from now.
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const double t = now();
  for (const Action& action : actions_) {
    if (action.type != Action::Type::Start) continue;
    const Job* job = engine_.find_job(action.job);
    const double walltime = job ? job->spec.walltime : 0;
    out.emplace_back(walltime > 0 ? t + walltime : kNever, action.nodes);
  }
}

template <typename Visit>
void PassContext::walk_releases(Visit&& visit) {
  if (partition_ >= 0 || sizes_changed_) {
    collect_releases();
    for (std::size_t i = 0; i < releases_.size();) {
      const double time = releases_[i].first;
      int freed = 0;
      for (; i < releases_.size() && releases_[i].first == time; ++i) freed += releases_[i].second;
      if (visit(time, freed)) return;
    }
    return;
  }
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const double t = now();
  starts_.clear();
  append_pass_starts(starts_);
  std::sort(starts_.begin(), starts_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The index is sorted by end; an end already past counts as now, which
  // keeps it sorted.
  const std::vector<ReleaseIndex::Entry>& running = engine_.releases_.entries();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < running.size() || j < starts_.size()) {
    double time = kNever;
    if (i < running.size()) time = std::max(running[i].end, t);
    if (j < starts_.size()) time = std::min(time, starts_[j].first);
    int freed = 0;
    for (; i < running.size() && std::max(running[i].end, t) == time; ++i) freed += running[i].size;
    for (; j < starts_.size() && starts_[j].first == time; ++j) freed += starts_[j].second;
    if (visit(time, freed)) return;
  }
}

std::vector<PassContext::ReleaseStep> PassContext::release_profile() {
  std::vector<ReleaseStep> profile{ReleaseStep{now(), idle_}};
  walk_releases([&profile](double time, int freed) {
    if (time == profile.back().time) {
      profile.back().free += freed;  // an end already past: free now
    } else {
      profile.push_back(ReleaseStep{time, profile.back().free + freed});
    }
    return false;
  });
  return profile;
}

PassContext::ReleaseStep PassContext::earliest_start(int nodes) {
  if (nodes <= idle_) return ReleaseStep{now(), idle_ - nodes};
  ReleaseStep found{std::numeric_limits<double>::infinity(), 0};
  int free = idle_;
  walk_releases([&](double time, int freed) {
    free += freed;
    if (free < nodes) return false;
    found = ReleaseStep{time, free - nodes};
    return true;
  });
  return found;
}

Verdict PassContext::refuse(RefusalCode code, JobId id, int want, int have, std::string detail) {
  ++refusal_counts_[static_cast<std::size_t>(code)];
  ++refusal_total_;
  if (dry_) refusals_.push_back(Refusal{code, id, want, have, detail});
  return Refusal{code, id, want, have, std::move(detail)};
}

Verdict PassContext::start(JobId id, std::optional<int> nodes) {
  return start_impl(id, nodes, nullptr);
}

Verdict PassContext::start_impl(JobId id, std::optional<int> nodes, const CoreSet* named,
                                int cores) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  Mark& mark = mark_of(id);
  if (mark.started)
    return refuse(RefusalCode::AlreadyActed, id, 0, 0, "already started in this pass");
  if (job->state != JobState::Pending) {
    return refuse(RefusalCode::NotPending, id, 0, 0, std::string(to_string(job->state)));
  }
  // Held, or waiting for a dependency or its begin time: not offered, not startable.
  if (const std::string_view why = waiting_reason(*job); !why.empty()) {
    return refuse(RefusalCode::NotPending, id, 0, 0, "PENDING (" + std::string(why) + ")");
  }
  if (engine_.cores_partition(job->partition)) return start_on_cores(*job, mark, named, cores);
  const JobSpec& spec = job->spec;
  const int size = nodes.value_or(spec.nodes);
  if (size < 1) return refuse(RefusalCode::BadArgument, id, size, 0, "size must be at least 1");
  if (nodes && size != spec.nodes) {
    if (spec.kind == JobKind::Rigid) {
      return refuse(RefusalCode::RigidJob, id, size, spec.nodes, "a rigid job starts at its size");
    }
    if (size < spec.min_nodes) return refuse(RefusalCode::BelowMin, id, size, spec.min_nodes);
    if (size > spec.max_nodes) return refuse(RefusalCode::AboveMax, id, size, spec.max_nodes);
    if (!is_allowed_size(spec.constraint, size)) {
      return refuse(RefusalCode::Constraint, id, size, 0, std::string(to_string(spec.constraint)));
    }
  }
  if (size > idle_) return refuse(RefusalCode::OverAllocation, id, size, idle_);
  Action action{Action::Type::Start, id, size};
  if (has_placement(spec)) {
    // Its nodes are picked now, among those idle at the start of the pass
    // (a placed job does not wait for nodes being released) and not placed
    // earlier in it; the engine enacts placed starts first, so that jobs
    // that take any nodes take others.
    const Cluster& cluster = engine_.cluster();
    init_placed();
    auto nodes = place(spec, size, cluster, placed_);
    if (!nodes) {
      return refuse(RefusalCode::Placement, id, size, 0,
                    "its nodes (--nodelist, --exclude, --gres) are not idle");
    }
    for (NodeIndex node : *nodes) placed_[static_cast<std::size_t>(node)] = true;
    action.placement = std::move(*nodes);
  }
  idle_ -= size;
  mark.started = true;
  actions_.push_back(std::move(action));
  return std::nullopt;
}

// ---- invasive partitions (issue 20 item 2)

const CoreMap& PassContext::core_map() {
  if (!cores_) cores_ = engine_.core_map();
  return *cores_;
}

std::vector<NodeIndex> PassContext::core_candidates() const {
  std::vector<NodeIndex> nodes;
  const Cluster& cluster = engine_.cluster();
  for (NodeIndex i = 0; i < cluster.size(); ++i) {
    const Node& node = cluster.node(i);
    if (node.up && !node.draining && (partition_ < 0 || node.partition == partition_)) {
      nodes.push_back(i);
    }
  }
  return nodes;
}

Verdict PassContext::start(JobId id, const CoreSet& cores) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!engine_.cores_partition(job->partition)) {
    return refuse(RefusalCode::BadArgument, id, 0, 0,
                  "cores are named for a job of an invasive partition only");
  }
  if (cores.empty()) return start(id);
  return start_impl(id, std::nullopt, &cores);
}

Verdict PassContext::start_with_cores(JobId id, int count) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!engine_.cores_partition(job->partition)) {
    return refuse(RefusalCode::BadArgument, id, 0, 0,
                  "a core count is for a job of an invasive partition only");
  }
  if (count < 1) return refuse(RefusalCode::BadArgument, id, count, 0, "at least 1 core");
  if (count != job->spec.layout->cores) {
    if (job->spec.kind != JobKind::Malleable) {
      return refuse(RefusalCode::RigidJob, id, count, job->spec.layout->cores,
                    "a rigid job starts on its cores");
    }
    if (count < job->spec.layout->min_cores) {
      return refuse(RefusalCode::BelowMin, id, count, job->spec.layout->min_cores, "cores");
    }
    if (count > job->spec.layout->max_cores) {
      return refuse(RefusalCode::AboveMax, id, count, job->spec.layout->max_cores, "cores");
    }
  }
  return start_impl(id, std::nullopt, nullptr, count);
}

Verdict PassContext::start_on_cores(const Job& job, Mark& mark, const CoreSet* named, int count) {
  const int want = count > 0 ? count : job.spec.layout->cores;
  const CoreMap& map = core_map();
  const std::vector<NodeIndex> candidates = core_candidates();
  CoreSet cores;
  if (named) {
    for (const NodeCores& nc : *named) {
      if (std::find(candidates.begin(), candidates.end(), nc.node) == candidates.end()) {
        const Node& node = engine_.cluster().node(nc.node);
        return refuse(RefusalCode::Placement, job.id, want, 0,
                      "node " + node.name + " is not an up node of this partition");
      }
    }
    if (auto conflict = map.check(*named)) {
      return refuse(conflict->busy ? RefusalCode::CoreBusy : RefusalCode::BadArgument, job.id, want,
                    0, conflict->why);
    }
    if (core_count(*named) != want) {
      return refuse(RefusalCode::BadArgument, job.id, core_count(*named), want,
                    "the job needs " + std::to_string(want) + " cores");
    }
    cores = *named;
    for (NodeCores& nc : cores) std::sort(nc.cores.begin(), nc.cores.end());
  } else {
    auto placed = place_cores(map, want, candidates);
    if (!placed) {
      int free = 0;
      for (NodeIndex n : candidates) free += map.free_count(n);
      return refuse(RefusalCode::Cores, job.id, want, free);
    }
    cores = std::move(*placed);
  }
  // The nodes it fills up are no longer ones a job may start on.
  cores_->take(job.id, cores);
  const int filled = idle_ - nodes_with_free_cores();
  idle_ -= filled;
  mark.started = true;
  Action action{Action::Type::Start, job.id, filled};
  action.cores = std::move(cores);
  actions_.push_back(std::move(action));
  return std::nullopt;
}

Verdict PassContext::check_resize(const Job* job, JobId id, int to, int direction) {
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state == JobState::Adapting) return refuse(RefusalCode::Adapting, id);
  if (job->state != JobState::Running) {
    return refuse(RefusalCode::NotRunning, id, 0, 0, std::string(to_string(job->state)));
  }
  if (!is_resizable(job->spec.kind)) {
    return refuse(RefusalCode::RigidJob, id, to, job->size(),
                  std::string(to_string(job->spec.kind)) + " jobs cannot be resized");
  }
  if (job->run->resize_held_until > now()) {
    return refuse(RefusalCode::ResizeHeld, id, to, job->size(),
                  "its last adaptation was rolled back; resizes wait until t=" +
                      std::to_string(job->run->resize_held_until));
  }
  const Mark& mark = mark_of(id);
  if (mark.preempted) {
    return refuse(RefusalCode::AlreadyActed, id, 0, 0, "preempted or suspended in this pass");
  }
  if (mark.direction == -direction) return refuse(RefusalCode::MixedResize, id, to);
  if (!job->run->cores.empty()) return check_resize_cores(*job, to, direction);
  const int current = tentative_size(*job);
  if (direction > 0 && to <= current) return refuse(RefusalCode::NotLarger, id, to, current);
  if (direction < 0 && to >= current) return refuse(RefusalCode::NotSmaller, id, to, current);
  if (to < 1)
    return refuse(RefusalCode::LeaderNode, id, to, current, "the leader node never leaves");
  if (to < job->spec.min_nodes) return refuse(RefusalCode::BelowMin, id, to, job->spec.min_nodes);
  if (to > job->spec.max_nodes) return refuse(RefusalCode::AboveMax, id, to, job->spec.max_nodes);
  if (!is_allowed_size(job->spec.constraint, to)) {
    return refuse(RefusalCode::Constraint, id, to, 0, std::string(to_string(job->spec.constraint)));
  }
  if (job->spec.kind == JobKind::Evolving) {
    // An evolving job's size is the application's choice: the scheduler may
    // grant its request, in part or in full, and nothing else.
    const auto& request = job->run->request;
    const int sign = !request ? 0 : request->op == ResizeRequest::Op::Expand ? +1 : -1;
    if (sign != direction) {
      return refuse(RefusalCode::NotRequested, id, to, current,
                    request ? "it asked for the other direction" : "it asked for no change");
    }
    if ((direction > 0 && to > request->nodes) || (direction < 0 && to < request->nodes)) {
      return refuse(RefusalCode::NotRequested, id, to, request->nodes,
                    "it asked for " + std::to_string(request->nodes) + " nodes");
    }
  }
  if (direction > 0 && to - current > idle_) {
    return refuse(RefusalCode::OverAllocation, id, to - current, idle_);
  }
  return std::nullopt;
}

namespace {

// A second resize of the same job in one pass moves the target of the first:
// the job adapts once, at the first call's place in the order.
Action& record_resize(std::vector<Action>& actions, Action::Type type, JobId id, int to) {
  for (Action& action : actions) {
    if (action.type == type && action.job == id) {
      action.nodes = to;
      return action;
    }
  }
  actions.push_back(Action{type, id, to});
  return actions.back();
}

// How many of `nodes` can go to another job once given back: a draining (or
// down) node leaves the job but never becomes idle, so it must not be promised.
int usable_nodes(const Cluster& cluster, const std::vector<NodeIndex>& nodes) {
  int n = 0;
  for (NodeIndex index : nodes) {
    const Node& node = cluster.node(index);
    if (node.up && !node.draining) ++n;
  }
  return n;
}

}  // namespace

Verdict PassContext::expand(JobId id, int to_nodes) {
  const Job* job = engine_.find_job(id);
  if (auto refusal = check_resize(job, id, to_nodes, +1)) return refusal;
  if (!job->run->cores.empty()) return expand_by_cores(*job, to_nodes);
  Mark& mark = mark_of(id);
  idle_ -= to_nodes - tentative_size(*job);
  mark.resize_to = to_nodes;
  sizes_changed_ = true;
  mark.direction = +1;
  record_resize(actions_, Action::Type::Expand, id, to_nodes);
  return std::nullopt;
}

Verdict PassContext::shrink(JobId id, int to_nodes,
                            const std::optional<std::vector<std::string>>& nodes) {
  const Job* job = engine_.find_job(id);
  if (auto refusal = check_resize(job, id, to_nodes, -1)) return refusal;
  if (!job->run->cores.empty()) return shrink_by_cores(*job, to_nodes, nodes.has_value());
  Mark& mark = mark_of(id);
  const int count = tentative_size(*job) - to_nodes;
  const Cluster& cluster = engine_.cluster();
  std::vector<NodeIndex> leaving;
  if (nodes) {
    for (const std::string& name : *nodes) {
      const auto index = cluster.find(name);
      if (!index) return refuse(RefusalCode::BadArgument, id, to_nodes, 0, "no node " + name);
      if (*index == job->allocation.front()) {
        return refuse(RefusalCode::LeaderNode, id, to_nodes, tentative_size(*job),
                      "node " + name + " is its leader, which never leaves");
      }
      leaving.push_back(*index);
    }
    if (auto error = check_shrink_nodes(cluster, *job, leaving, count, mark.leaving)) {
      return refuse(RefusalCode::BadArgument, id, to_nodes, tentative_size(*job), *error);
    }
  } else {
    leaving = default_shrink_nodes(cluster, *job, count, mark.leaving);
  }
  idle_ += usable_nodes(cluster, leaving);
  mark.resize_to = to_nodes;
  sizes_changed_ = true;
  mark.direction = -1;
  mark.leaving.insert(mark.leaving.end(), leaving.begin(), leaving.end());
  record_resize(actions_, Action::Type::Shrink, id, to_nodes).leaving = mark.leaving;
  return std::nullopt;
}

// ---- resizing by cores (issue 20 item 2)

Verdict PassContext::check_resize_cores(const Job& job, int to, int direction) {
  const Mark& mark = mark_of(job.id);
  const int current = mark.cores_to > 0 ? mark.cores_to : core_count(job.run->cores);
  if (direction > 0 && to <= current) return refuse(RefusalCode::NotLarger, job.id, to, current);
  if (direction < 0 && to >= current) return refuse(RefusalCode::NotSmaller, job.id, to, current);
  if (to < 1) {
    return refuse(RefusalCode::LeaderNode, job.id, to, current,
                  "it keeps at least one core on its leader node");
  }
  if (to < job.spec.layout->min_cores) {
    return refuse(RefusalCode::BelowMin, job.id, to, job.spec.layout->min_cores, "cores");
  }
  if (to > job.spec.layout->max_cores) {
    return refuse(RefusalCode::AboveMax, job.id, to, job.spec.layout->max_cores, "cores");
  }
  return std::nullopt;
}

Verdict PassContext::expand_by_cores(const Job& job, int to) {
  Mark& mark = mark_of(job.id);
  CoreSet held = mark.cores_held.empty() ? job.run->cores : mark.cores_held;
  const int want = to - core_count(held);
  const std::vector<NodeIndex> candidates = core_candidates();
  const CoreMap& map = core_map();
  auto grown = grow_cores(map, held, want, candidates);
  if (!grown) {
    int free = 0;
    for (NodeIndex n : candidates) free += map.free_count(n);
    return refuse(RefusalCode::Cores, job.id, want, free);
  }
  const int before = nodes_with_free_cores();
  cores_->take(job.id, *grown);
  idle_ -= before - nodes_with_free_cores();
  add_cores(held, *grown);
  mark.cores_held = std::move(held);
  mark.cores_to = to;
  mark.direction = +1;
  add_cores(record_resize(actions_, Action::Type::Expand, job.id, to).cores, *grown);
  return std::nullopt;
}

Verdict PassContext::shrink_by_cores(const Job& job, int to, bool named_nodes) {
  if (named_nodes) {
    return refuse(RefusalCode::BadArgument, job.id, to, 0,
                  "a job of an invasive partition is shrunk by cores; the engine picks them");
  }
  Mark& mark = mark_of(job.id);
  CoreSet held = mark.cores_held.empty() ? job.run->cores : mark.cores_held;
  auto leaving = sched::shrink_cores(core_map(), held, core_count(held) - to);
  if (!leaving) return refuse(RefusalCode::BadArgument, job.id, to, core_count(held));
  // Its cores stay busy until the application has let them go: nothing
  // else may start on them in this pass.
  remove_cores(held, *leaving);
  mark.cores_held = std::move(held);
  mark.cores_to = to;
  mark.direction = -1;
  add_cores(record_resize(actions_, Action::Type::Shrink, job.id, to).cores, *leaving);
  return std::nullopt;
}

Verdict PassContext::request_perf(JobId id) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state == JobState::Adapting) return refuse(RefusalCode::Adapting, id);
  if (job->state != JobState::Running) {
    return refuse(RefusalCode::NotRunning, id, 0, 0, std::string(to_string(job->state)));
  }
  if (mark_of(id).direction != 0) {
    return refuse(RefusalCode::Adapting, id, 0, 0, "resized in this pass: MTCT resets after it");
  }
  actions_.push_back(Action{Action::Type::RequestPerf, id});
  return std::nullopt;
}

Verdict PassContext::preempt(JobId id, PreemptMode mode) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state == JobState::Adapting) return refuse(RefusalCode::Adapting, id);
  if (job->state != JobState::Running) {
    return refuse(RefusalCode::NotRunning, id, 0, 0, std::string(to_string(job->state)));
  }
  Mark& mark = mark_of(id);
  if (mark.preempted || mark.direction != 0) {
    return refuse(RefusalCode::AlreadyActed, id, 0, 0, "already preempted or resized in this pass");
  }
  idle_ += usable_nodes(engine_.cluster(), job->allocation);
  mark.preempted = true;
  sizes_changed_ = true;
  Action action{Action::Type::Preempt, id};
  action.mode = mode;
  actions_.push_back(action);
  return std::nullopt;
}

Verdict PassContext::suspend(JobId id) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state == JobState::Adapting) return refuse(RefusalCode::Adapting, id);
  if (job->state != JobState::Running) {
    return refuse(RefusalCode::NotRunning, id, 0, 0, std::string(to_string(job->state)));
  }
  Mark& mark = mark_of(id);
  if (mark.preempted || mark.direction != 0) {
    return refuse(RefusalCode::AlreadyActed, id, 0, 0,
                  "already preempted, suspended or resized in this pass");
  }
  if (!job->run->cores.empty()) {
    // Its cores are free for the rest of the pass (an urgent job may take
    // them); it keeps its core set, to resume on.
    const int before = nodes_with_free_cores();
    core_map();
    cores_->release(id, job->run->cores);
    idle_ += nodes_with_free_cores() - before;
  } else {
    idle_ += usable_nodes(engine_.cluster(), job->allocation);
  }
  mark.preempted = true;
  sizes_changed_ = true;
  actions_.push_back(Action{Action::Type::Suspend, id});
  return std::nullopt;
}

Verdict PassContext::resume(JobId id) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state != JobState::Suspended) {
    return refuse(RefusalCode::NotSuspended, id, 0, 0, std::string(to_string(job->state)));
  }
  Mark& mark = mark_of(id);
  if (mark.resumed) return refuse(RefusalCode::AlreadyActed, id, 0, 0, "resumed in this pass");
  if (!job->run->cores.empty()) return resume_on_cores(*job, mark);
  // Its processes are frozen on its own nodes: it resumes there or not at
  // all, and only on nodes idle now (not ones another job gives back later
  // in this pass, which a start by count may take).
  const Cluster& cluster = engine_.cluster();
  init_placed();
  int busy = 0;
  for (NodeIndex node : job->allocation) {
    if (!cluster.idle(node) || placed_[static_cast<std::size_t>(node)]) ++busy;
  }
  if (busy > 0) {
    return refuse(RefusalCode::Placement, id, job->size(), job->size() - busy,
                  std::to_string(busy) + " of its nodes are not idle");
  }
  if (job->size() > idle_) return refuse(RefusalCode::OverAllocation, id, job->size(), idle_);
  for (NodeIndex node : job->allocation) placed_[static_cast<std::size_t>(node)] = true;
  idle_ -= job->size();
  mark.resumed = true;
  Action action{Action::Type::Resume, id, job->size()};
  action.placement = job->allocation;
  actions_.push_back(std::move(action));
  return std::nullopt;
}

Verdict PassContext::resume_on_cores(const Job& job, Mark& mark) {
  // Its processes are confined to its cores: it resumes on them or waits.
  const std::vector<NodeIndex> candidates = core_candidates();
  for (const NodeCores& nc : job.run->cores) {
    if (std::find(candidates.begin(), candidates.end(), nc.node) == candidates.end()) {
      return refuse(RefusalCode::Placement, job.id, core_count(job.run->cores), 0,
                    "node " + engine_.cluster().node(nc.node).name + " is not up and undrained");
    }
  }
  if (auto conflict = core_map().check(job.run->cores)) {
    return refuse(conflict->busy ? RefusalCode::CoreBusy : RefusalCode::BadArgument, job.id,
                  core_count(job.run->cores), 0, conflict->why);
  }
  const int before = nodes_with_free_cores();
  cores_->take(job.id, job.run->cores);
  idle_ -= before - nodes_with_free_cores();
  mark.resumed = true;
  actions_.push_back(Action{Action::Type::Resume, job.id, job.size()});
  return std::nullopt;
}

Verdict PassContext::reserve(JobId id, double time) {
  const Job* job = engine_.find_job(id);
  if (!job) return refuse(RefusalCode::UnknownJob, id);
  if (!mine(*job)) return refuse_other_partition(*job);
  if (job->state != JobState::Pending) {
    return refuse(RefusalCode::NotPending, id, 0, 0, std::string(to_string(job->state)));
  }
  if (!std::isfinite(time))
    return refuse(RefusalCode::BadArgument, id, 0, 0, "time must be finite");
  Action action{Action::Type::Reserve, id};
  action.time = time;
  actions_.push_back(action);
  return std::nullopt;
}

}  // namespace sched
