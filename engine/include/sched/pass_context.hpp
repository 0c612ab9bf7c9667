// One scheduling pass's view of the engine: a read-only snapshot plus the
// tentative state the pass's accepted actions have built so far. Every
// action is checked at once against that tentative state (docs/design.md §4) and,
// when accepted, recorded; the engine enacts the record in call order after
// the policy returns, or drops it if the policy failed.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/core_map.hpp"
#include "sched/decision.hpp"
#include "sched/job.hpp"
#include "sched/node_pool.hpp"
#include "sched/pending_queue.hpp"

namespace sched {

class Engine;
class Cluster;

enum class PassReason { Tick, Submit, Completion, Adaptation, Request, Perf, Corridor, Manual };
std::string_view to_string(PassReason reason);

struct PowerView {
  double lower_w = 0;  // 0/0: no corridor
  double upper_w = 0;
  double current_w = 0;
  double idle_w_per_node = 0;
};

class PassContext {
 public:
  // dry: actions are checked but the pass will never be enacted (reload check).
  // partition: the pass of that partition (issue 20 item 1): it sees only the
  // partition's jobs and nodes, and an action on another partition's job is
  // refused (`partition`); -1: the whole cluster, as without partitions.
  PassContext(Engine& engine, PassReason reason, bool dry, int partition = -1);
  ~PassContext();
  PassContext(const PassContext&) = delete;
  PassContext& operator=(const PassContext&) = delete;

  // The partition this pass is of (-1: all), and its name ("" for all).
  int partition() const { return partition_; }
  const std::string& partition_name() const;

  double now() const;
  PassReason reason() const { return reason_; }
  bool dry() const { return dry_; }
  // Incremental passes: when the only changes since this policy's last
  // successful pass are submissions appended to the offered queue (and no
  // running job's estimated end has passed), the position (0-based) of the
  // first of them in pending(); pending_count() when there are none.
  // nullopt when anything else changed.
  std::optional<std::size_t> appended() const { return appended_; }
  void set_appended(std::size_t first) { appended_ = first; }
  int nodes_total() const;
  // Tentative: falls as the pass starts or grows jobs, rises as it shrinks
  // or preempts them. In an invasive partition (issue 20 item 2): its up,
  // undrained nodes with at least one free core.
  int nodes_idle() const { return idle_; }
  PowerView power() const;

  // Waiting jobs in priority order (urgent first, then arrival). Walked
  // lazily: a pass that looks at the first few jobs of a long queue pays for
  // those only. pending_at(i) is nullptr past the end.
  std::size_t pending_count() const;
  const Job* pending_at(std::size_t index);
  const std::vector<const Job*>& pending();  // the whole queue
  // Running jobs (RUNNING or ADAPTING) in start order. Built on first use.
  const std::vector<const Job*>& running();
  std::size_t running_count() const;
  // SUSPENDED jobs, highest priority first (then earliest suspended). Built
  // on first use.
  const std::vector<const Job*>& suspended();

  const Job* job(JobId id) const;
  const Cluster& cluster() const;
  // For a policy host that keeps views across passes (the Lua host): the
  // queue with its change log, and the jobs changed since a point (see
  // Engine::touched_since).
  const PendingQueue& pending_queue() const;
  std::optional<std::span<const JobId>> touched_since(std::uint64_t from) const;
  std::uint64_t touched_end() const;
  // The job's size as this pass has left it (for a pending job: 0).
  int tentative_size(const Job& job) const;

  // ---- helpers every backfilling policy needs (issue 15), computed in C++
  // The release profile: when nodes free up, judged by estimated ends. Each
  // step is a time and the nodes free from then on; the first is now, with
  // the idle nodes (tentative). Later steps add what the running jobs give
  // back at their estimated ends (at their sizes as this pass has left them;
  // an end already past counts as now; no estimate: never, +inf) and what
  // the jobs started earlier in this pass give back (each holds its nodes
  // until now + walltime, or forever with no walltime). One step per
  // distinct time, in time order.
  struct ReleaseStep {
    double time;
    int free;
  };
  std::vector<ReleaseStep> release_profile();
  // The first step of the profile with at least `nodes` free: its time and
  // how many nodes more than `nodes` are free then (the time is +inf when
  // only jobs without an estimate free enough; {+inf, 0} when never).
  ReleaseStep earliest_start(int nodes);

  // A job of an invasive partition (issue 20 item 2) starts on cores the
  // engine places (sched/core_map.hpp: packed by socket, fewest nodes), and
  // `nodes` is not used; refused `cores` when its partition has too few free.
  Verdict start(JobId id, std::optional<int> nodes = std::nullopt);
  // The same on the cores named (as many as the job needs, on up nodes of
  // the pass's partition); refused `core_busy` when one is busy, and
  // `bad_argument` when the set is malformed or the job not of such a
  // partition. An empty set: the engine places it.
  Verdict start(JobId id, const CoreSet& cores);
  // A malleable job of an invasive partition started on `count` cores, in
  // [min_cores, max_cores] (below_min, above_max), placed by the engine; a
  // rigid one only at its own count (rigid_job).
  Verdict start_with_cores(JobId id, int count);
  // The invasive partitions' cores as this pass has left them (tentative:
  // its core starts are taken).
  const CoreMap& core_map();
  // A malleable job of an invasive partition is resized by cores: the
  // target is a core count within [min_cores, max_cores] (BelowMin,
  // AboveMax); an expand takes free cores near its own at once
  // (sched/core_resize.hpp; `cores` when too few are free); a shrink picks
  // the cores that leave (whole nodes, then sockets), which are free only
  // once it is done; naming nodes is a BadArgument there.
  Verdict expand(JobId id, int to_nodes);
  // `nodes`: the nodes that leave, by name (as many as the shrink gives
  // back, each the job's and not its leader); nothing: the engine picks them
  // (sched/shrink_choice.hpp: down, then draining, then the newest).
  Verdict shrink(JobId id, int to_nodes,
                 const std::optional<std::vector<std::string>>& nodes = std::nullopt);
  Verdict request_perf(JobId id);
  Verdict preempt(JobId id, PreemptMode mode);
  Verdict reserve(JobId id, double time);
  // Freezes a RUNNING job: its usable nodes count as idle for the rest of the
  // pass; it keeps its node list. Resumes a SUSPENDED job on those same
  // nodes, which must all be idle at the start of the pass (Placement) and
  // not taken by a placed start or resume earlier in it. A job of an
  // invasive partition gives its cores back instead (free for the rest of
  // the pass), keeps its core set, and resumes on those very cores, which
  // must all be free (CoreBusy otherwise).
  Verdict suspend(JobId id);
  Verdict resume(JobId id);

  const std::vector<Action>& actions() const { return actions_; }
  // Refusals seen in this pass, by code (for statistics).
  const std::array<int, kRefusalCodeCount>& refusal_counts() const { return refusal_counts_; }
  int refusal_total() const { return refusal_total_; }
  // The refusals themselves: kept in a dry pass only (sched policy check).
  const std::vector<Refusal>& refusals() const { return refusals_; }

 private:
  struct Mark {
    bool started = false;
    bool preempted = false;  // or suspended: it gives all its nodes back
    bool resumed = false;
    int resize_to = 0;                 // 0: not resized in this pass
    int direction = 0;                 // +1 expand, -1 shrink
    std::vector<NodeIndex> leaving{};  // shrink: the nodes that leave so far
    int cores_to = 0;                  // a cores job: its target in cores; 0: not resized
    CoreSet cores_held{};              // a cores job resized here: its cores so far
  };

 public:
  // The containers a pass fills, kept by the engine between passes with
  // their capacity (issue 15: a pass allocated its action list, its marks'
  // buckets and its scratch anew each time). A pass takes them at its start
  // and gives them back, emptied, at its end.
  struct Scratch {
    std::unordered_map<JobId, Mark> marks;
    std::vector<Action> actions;
    std::vector<const Job*> pending;
    std::vector<std::pair<double, int>> releases;
    std::vector<std::pair<double, int>> starts;
    // The marks' nodes, taken back at a pass's end (a mark per job acted on).
    NodePool<std::unordered_map<JobId, Mark>> mark_nodes;
  };

 private:
  // The job's mark in this pass, made (unmarked) on first use.
  Mark& mark_of(JobId id);
  Verdict refuse(RefusalCode code, JobId id, int want = 0, int have = 0, std::string detail = {});
  Verdict start_impl(JobId id, std::optional<int> nodes, const CoreSet* named, int cores = 0);
  Verdict start_on_cores(const Job& job, Mark& mark, const CoreSet* named, int count = 0);
  // The nodes a core start may use: up, not draining, of this pass's partition.
  std::vector<NodeIndex> core_candidates() const;
  // How many of them have a free core (tentative): an invasive partition's
  // nodes_idle, so that a policy comparing a job's nodes (1) with the idle
  // count tries it, and the engine places it or refuses `cores`.
  int nodes_with_free_cores();
  // (time, nodes given back) of every running job and every job started in
  // this pass, sorted by time, into releases_.
  void collect_releases();
  // Adds the (end, nodes) of the jobs this pass started to `out`.
  void append_pass_starts(std::vector<std::pair<double, int>>& out) const;
  // Calls visit(time, nodes freed then) once per distinct release time, in
  // time order, until it returns true. Reads the engine's release index
  // merged with this pass's starts when the running jobs' sizes are the
  // engine's (no resize, preemption or suspension in this pass, the whole
  // cluster's pass); else collect_releases. The same steps either way.
  template <typename Visit>
  void walk_releases(Visit&& visit);
  Verdict check_resize(const Job* job, JobId id, int to, int direction);
  // The same for a job of an invasive partition, by cores; then the resize.
  Verdict check_resize_cores(const Job& job, int to, int direction);
  Verdict expand_by_cores(const Job& job, int to);
  Verdict shrink_by_cores(const Job& job, int to, bool named_nodes);
  Verdict resume_on_cores(const Job& job, Mark& mark);
  // Whether the job is this pass's to act on (always without a partition).
  bool mine(const Job& job) const { return partition_ < 0 || job.partition == partition_; }
  Verdict refuse_other_partition(const Job& job);
  // placed_ sized on first use; in a partition's pass, other partitions'
  // nodes are marked taken from the start, so placement never picks them.
  void init_placed();

  Engine& engine_;
  PassReason reason_;
  bool dry_;
  int partition_;
  int idle_;
  std::unordered_map<JobId, Mark> marks_;
  std::vector<Action> actions_;
  std::array<int, kRefusalCodeCount> refusal_counts_{};  // no allocation per pass
  int refusal_total_ = 0;
  std::vector<Refusal> refusals_;
  std::vector<const Job*> pending_;  // the part of the queue walked so far (this partition's)
  mutable std::optional<std::size_t> pending_total_;  // a partition's pass: its count, once walked
  std::optional<PendingQueue::Cursor> pending_cursor_;
  bool pending_complete_ = false;
  std::optional<std::vector<const Job*>> running_;
  std::optional<std::vector<const Job*>> suspended_;
  std::vector<std::pair<double, int>> releases_;  // collect_releases' scratch
  std::vector<std::pair<double, int>> starts_;    // walk_releases' scratch: this pass's starts
  // A running job's tentative size differs from its size (resized,
  // preempted or suspended in this pass): the release index does not say it.
  bool sizes_changed_ = false;
  std::optional<std::size_t> appended_;
  // Nodes given to placed jobs in this pass, by index; sized on first use.
  std::vector<bool> placed_;
  std::optional<CoreMap> cores_;  // tentative, copied from the engine's on first use
};

}  // namespace sched
