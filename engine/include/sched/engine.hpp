// The engine: cluster and job state, the scheduling pass, decision checking
// and enactment. Inputs change the state and record events; a pass is then
// due; the driver (daemon or simulator) runs it once the inputs of one
// instant are in, so several events at one instant give one pass.
//
//   inputs → state + events → pass (policy on a snapshot) → checked actions
//   → enactor → results come back as inputs
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/change_log.hpp"
#include "sched/cluster.hpp"
#include "sched/core_map.hpp"
#include "sched/decision.hpp"
#include "sched/dependency.hpp"
#include "sched/enactor.hpp"
#include "sched/env.hpp"
#include "sched/event.hpp"
#include "sched/fair_share.hpp"
#include "sched/job.hpp"
#include "sched/job_array.hpp"
#include "sched/mtct_window.hpp"
#include "sched/node_pool.hpp"
#include "sched/partition.hpp"
#include "sched/pass_context.hpp"
#include "sched/pending_queue.hpp"
#include "sched/policy.hpp"
#include "sched/policy_failure.hpp"
#include "sched/priority.hpp"
#include "sched/release_index.hpp"
#include "sched/status.hpp"

namespace sched {

struct EngineConfig {
  // A job on a node that fails goes back to the queue (true) or fails.
  bool requeue_on_node_failure = false;
  // Power drawn by an idle node, watts (docs/design.md §7: 71 W on the paper's system).
  double idle_w_per_node = 71;
  // After an adaptation is rolled back, the job is not resized again for this
  // long (seconds), so that a policy does not retry what just failed at
  // message speed. The simulator's adaptations never fail: 0.
  double resize_backoff_s = 0;
  // After this many live passes in a row have failed, the engine goes back
  // to the last good policy (the last one that completed a live pass) and
  // publishes policy.reverted. 0: never revert (the simulator, which runs
  // one policy; schedd's [policy] revert_after_failures is 3 by default).
  int revert_after_failures = 0;
  // A pending job whose dependency can never be met (afterok on a job that
  // failed, ...) is cancelled with reason DependencyNeverSatisfied (true),
  // or stays pending with that reason until someone cancels it (false, as
  // Slurm without SchedulerParameters=kill_invalid_depend).
  bool kill_invalid_depend = false;
  // ---- priority (issue 18 item 5): weights, QOS table, fair share
  // (schedd's [priority] and [qos.NAME]); all weights 0 by default.
  PriorityConfig priority;
  // ---- MTCT (issue 17 item 5; sched/mtct_window.hpp)
  // The MTCT a policy sees is the ratio over this many seconds of recent
  // measurements (perf_totals); 0: over everything since the job's last
  // adaptation. schedd's [perf] mtct_window_s, the simulator's
  // --mtct-window.
  double mtct_window_s = 0;
  // A new MTCT reaches the policy (Job::mtct, and a pass) only when it moved
  // by more than this fraction of the one the policy has; 0: every report.
  double mtct_refresh_fraction = 0;
  // ---- job arrays (issue 18 item 1)
  // Slurm's MaxArraySize: array indices run from 0 to max_array_size - 1.
  int max_array_size = kDefaultMaxArraySize;
};

// A partition as the engine runs it (sched/partition.hpp).
struct Partition {
  PartitionSpec spec;
  // Its own policy; null: the engine's (set_policy), which then runs one
  // pass per partition that has none, each on that partition alone.
  std::shared_ptr<Policy> policy;
  std::shared_ptr<Policy> last_good;  // of its own policy: the last that completed a live pass
  int consecutive_failed = 0;         // its own policy's live passes failed in a row
};

// The last time the engine went back to the last good policy.
struct PolicyRevert {
  double time = 0;      // the engine's clock
  std::string from;     // the policy that kept failing
  std::string to;       // the last good policy, running again
  int failures = 0;     // passes in a row it failed
  std::string message;  // as published in policy.reverted
};

struct PassStats {
  std::uint64_t passes = 0;
  std::uint64_t failed = 0;   // policy errors: actions dropped
  std::uint64_t actions = 0;  // accepted and enacted
  std::uint64_t refusals = 0;
  std::vector<std::uint64_t> refusals_by_code = std::vector<std::uint64_t>(kRefusalCodeCount);
  double last_s = 0;
  double total_s = 0;
  double max_s = 0;
  std::optional<PolicyFailure> last_failure;  // of the last failed pass, with its time
  int consecutive_failed = 0;  // live passes failed in a row (by the policy running now)
  std::uint64_t reverts = 0;   // times the engine went back to the last good policy
  std::optional<PolicyRevert> last_revert;
};

// What a dry pass would do (sched policy check): the actions it would
// enact, in call order, and the actions the engine refused.
struct DryPassReport {
  std::optional<PolicyFailure> failure;  // the pass failed: its actions would be dropped
  std::vector<Action> actions;
  std::vector<Refusal> refusals;
};

class Engine {
 public:
  Engine(Clock& clock, Enactor& enactor, EngineConfig config = {});
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // ---- setup
  NodeIndex add_node(std::string name, int cores = 1);
  // What its agent reports of its GPUs (hwloc, or declared); NotFound.
  Status set_node_gpus(const std::string& name, int gpus);
  // Its sockets, as its agent reports (hwloc): an invasive partition packs
  // jobs by socket. NotFound.
  Status set_node_sockets(const std::string& name, int sockets);
  // Installs a policy. The one it replaces stays the last good policy if it
  // completed a live pass; see EngineConfig::revert_after_failures.
  void set_policy(std::shared_ptr<Policy> policy);
  Policy* policy() const { return policy_.get(); }
  const std::shared_ptr<Policy>& shared_policy() const { return policy_; }
  // Whether a policy other than the running one completed a live pass (what
  // a revert would go back to).
  bool has_fallback_policy() const { return last_good_ && last_good_ != policy_; }
  // Sinks see every event, in order. The engine does not own them.
  void add_sink(EventSink* sink);

  // ---- inputs
  // A new job. With requested_id > 0 (workload replay, journal recovery)
  // that id is used; it must not be taken (Conflict). New ids continue above
  // the highest id seen, so an id is never reused. A bad spec, or one the
  // cluster is too small for, is Invalid. A spec with `array` set
  // (--array) submits one job per index with consecutive ids and returns the
  // first, the array's id; a bad array text is Invalid and submits nothing.
  Result<JobId> submit(JobSpec spec, JobId requested_id = 0);
  // Cancels a pending or running job. NotFound: no such job; Conflict: it
  // has ended or is ending.
  Status cancel(JobId id);
  // Results of enactment.
  void job_started(JobId id);
  // `report`: why and at what cost, as the job's node measured it.
  void job_ended(JobId id, int exit_status, const JobEndReport& report = {});
  void adaptation_done(JobId id, bool ok);
  // Something outside the job broke it (an adaptation that failed in its
  // window): stop it as FAILED; `why` goes with its job.completing event.
  void fail(JobId id, const std::string& why);
  // An evolving job asks to grow or shrink to request.nodes. Replaces an
  // earlier request. NotFound: no such job; Conflict: not running, or not a
  // change from its size now; Invalid: not evolving, or outside its bounds.
  Status resize_request(JobId id, ResizeRequest request);
  // Drops the job's request (schedd's timeout, a restart). NotFound: no
  // such job; Conflict: it has none.
  Status withdraw_resize_request(JobId id);
  // A measured MTCT; the policy sees it (Job::mtct, a Perf pass) when it
  // moved by more than EngineConfig::mtct_refresh_fraction.
  void perf_report(JobId id, double mtct);
  // Communication and computation seconds of the job's processes since its
  // last adaptation (running sums: the agents' perf.report summed over the
  // nodes, the simulator's model). The engine keeps them over
  // EngineConfig::mtct_window_s and, with `publish`, reports the ratio over
  // that window as perf_report does; without, it only records them.
  void perf_totals(JobId id, double comm_s, double compute_s, bool publish = true);
  void power_report(JobId id, double watts_per_node);
  void tick();
  void set_corridor(double lower_w, double upper_w);
  // Publishes power.violation when the cluster's draw leaves the corridor
  // (reason "above" or "below") and when it is back inside it or the
  // corridor is cleared ("inside", "cleared"). settle() calls it once the
  // engine is at rest, so an instant outside within one settling is not one.
  void check_power();
  // NotFound: no such node. Setting what already is, is success.
  Status set_node_up(const std::string& name, bool up, const std::string& why);
  // `why`: the drain's reason, carried by its node.drain event.
  Status set_node_draining(const std::string& name, bool draining, const std::string& why = {});

  // ---- partitions (issue 20 item 1; sched/partition.hpp)
  // Replaces the partitions (an empty list: the one implicit partition,
  // "default", with every node and the engine's policy). Nodes no partition
  // names, and nodes added later that none names, go to the default one.
  // Invalid, and nothing changed, when check_partitions refuses them;
  // Conflict once a job exists (a job's partition is fixed for its life).
  Status set_partitions(std::vector<PartitionSpec> partitions);
  // Whether partitions were configured (false: the implicit one).
  bool partitioned() const { return partitioned_; }
  const std::vector<Partition>& partitions() const { return partitions_; }
  std::optional<int> partition_index(std::string_view name) const;
  // ---- invasive partitions (issue 20 item 2; sched/core_map.hpp)
  // Whether partition `index` allocates cores (kind = "cores").
  bool cores_partition(int index) const;
  // Which cores of the invasive partitions' nodes are busy, and by whom.
  const CoreMap& core_map() const { return cores_; }
  // All the cores of a partition's nodes (up or not).
  int partition_cores(int index) const;
  // The partition's own policy (hot-reloaded by its PolicyHost); null gives
  // it the engine's. NotFound: no such partition.
  Status set_partition_policy(const std::string& name, std::shared_ptr<Policy> policy);
  // The policy that runs the partition's passes: its own, else the engine's.
  std::shared_ptr<Policy> partition_policy(const std::string& name) const;
  // Sets its state (publishes partition.state with `why` when it changed);
  // a partition set up again gets a pass. NotFound.
  Status set_partition_state(const std::string& name, PartitionState state,
                             const std::string& why = {});
  // Its limits, for the submissions from now on (jobs already in keep what
  // they were given). NotFound.
  Status set_partition_limits(const std::string& name, PartitionLimits limits);
  // The groups a user is in, for AllowGroups (schedd asks the system);
  // without one, only AllowUsers admits.
  using GroupLookup = std::function<std::vector<std::string>(const std::string& user)>;
  void set_group_lookup(GroupLookup lookup) { group_lookup_ = std::move(lookup); }

  // ---- job arrays (issue 18 item 1)
  // Cancels every task of the array `array_id` that has not ended or begun
  // ending; how many. NotFound: no such array.
  Result<int> cancel_array(JobId array_id);
  // The job id of task `index` of array `array_id`; nothing when there is no
  // such task.
  std::optional<JobId> array_task(JobId array_id, int index) const;
  // The job ids of an array's tasks (ended ones included); empty when unknown.
  std::vector<JobId> array_tasks(JobId array_id) const;

  // ---- holds, release, requeue (scontrol's verbs; who may is the driver's rule)
  // Holds a PENDING job back: it is not offered to policies until released.
  // An admin's hold replaces a user's. NotFound; Conflict: not pending.
  Status hold(JobId id, bool admin);
  // Lifts a hold. Conflict: not held.
  Status release(JobId id);
  // Kills a STARTING, RUNNING or ADAPTING job and puts it back in the queue
  // (not held: it may start again at once). Conflict: in another state.
  Status requeue(JobId id);
  // Where the engine asks how a job it no longer holds ended (the journal,
  // after a restart): its last state, or nothing when unknown. Without one, a
  // job id the engine does not know is unknown.
  using EndedJobLookup = std::function<std::optional<JobState>(JobId)>;
  void set_ended_job_lookup(EndedJobLookup lookup) { ended_lookup_ = std::move(lookup); }
  // Drops an ended job from memory (issue 15: the simulator keeps no ended
  // job; schedd could, after Slurm's MinJobAge). Its end state stays known
  // to dependencies, and its id stays taken. Call it outside any input or
  // pass (the engine may hold the job there). NotFound: no such job;
  // Conflict: it has not ended.
  Status forget_job(JobId id);
  // How many jobs forget_job dropped.
  std::size_t forgotten_jobs() const { return forgotten_.size(); }
  // The earliest --begin time a pending job waits for; tick() lets those
  // whose time has come into the queue.
  std::optional<double> next_begin_time() const;

  // Recovery from the journal (schedd restart): puts a saved job back as it
  // was. A pending job rejoins the queue with its submit time; a job that
  // held nodes gets those nodes back (by name; unknown ones are added, down
  // until their agent registers) and is RUNNING until its agent reports it
  // (adopted) or not (Engine::job_ended). Terminal jobs are not restored.
  // Emits no event. Conflict when the job cannot be put back (id taken,
  // node held by another job); Invalid for a job that ended or held nothing.
  Status restore_job(const Job& saved, const std::vector<std::string>& nodes);
  // New ids continue above `id` (the highest id the journal ever saw, so
  // that ids of finished jobs are not reused either).
  void skip_ids_through(JobId id) { last_id_ = std::max(last_id_, id); }
  // Event sequence numbers continue above `seq` (the journal's last).
  void skip_event_seq_through(std::uint64_t seq) { event_seq_ = std::max(event_seq_, seq); }

  // Records an event that is not a job state change (policy reloads, ...).
  void publish(Event event) { emit(std::move(event)); }

  // ---- priority (issue 18 item 5)
  // Charges fair-share usage for a job that ended before the engine started
  // (schedd rebuilds usage from the journal's ended jobs after a restart);
  // decayed from `end_time`. Jobs that end in the engine are charged by it.
  void record_usage(const std::string& user, const std::string& account, double node_seconds,
                    double end_time);
  const FairShare& fair_share() const { return fair_share_; }
  // Recomputes every pending job's priority and re-sorts the queue, when a
  // calc period has passed since the last time (tick() calls it) or `force`.
  void recompute_priorities(bool force = false);

  // ---- time limits
  // The one rule both drivers apply. A STARTING or RUNNING job whose limit
  // (Job::est_end(): start + walltime + limit_extension) has passed at now()
  // is stopped as TIMEOUT. A job that is ADAPTING is never timed out while it
  // adapts: the time it spends adapting is added to its limit when the
  // adaptation ends (and a shrink stretches what is left of the limit by
  // old/new size), and its limit is checked again from then on. The daemon
  // calls expire_time_limits() every turn and wakes at next_time_limit(); the
  // simulator calls expire_time_limit(id) at the limit it planned for a job.
  // Returns the jobs stopped, in start order.
  std::vector<JobId> expire_time_limits();
  // The same for one job; whether it was stopped.
  bool expire_time_limit(JobId id);
  // The earliest limit among STARTING and RUNNING jobs; nothing when none
  // of them has one.
  std::optional<double> next_time_limit() const;

  // ---- passes
  void request_pass(PassReason reason);
  bool pass_due() const { return due_.has_value(); }
  // Runs one pass if one is due (and worth running); returns whether it ran.
  bool run_pass_if_due();
  // Runs one pass now, for whatever reason.
  void run_pass(PassReason reason);
  // A pass that checks but never enacts: the reload check of a new policy.
  // `partition`: the pass of that partition (its jobs and nodes); "": the
  // whole cluster.
  std::optional<PolicyFailure> dry_pass(Policy& policy, const std::string& partition = {});
  // The same, with what the pass would have done (engine_dry_pass.cpp).
  DryPassReport dry_pass_report(Policy& policy, const std::string& partition = {});

  // ---- queries
  double now() const { return clock_.now(); }
  const Clock& clock() const { return clock_; }
  const Cluster& cluster() const { return cluster_; }
  const Job* find_job(JobId id) const;
  const std::unordered_map<JobId, std::unique_ptr<Job>>& jobs() const { return jobs_; }
  const PendingQueue& pending_queue() const { return pending_; }
  std::vector<const Job*> pending_jobs() const;  // priority order
  std::vector<const Job*> running_jobs() const;  // start order
  std::size_t running_jobs_count() const { return running_.size(); }
  // SUSPENDED jobs, highest priority first, then earliest suspended: the
  // order a policy resumes them in.
  std::vector<const Job*> suspended_jobs() const;
  std::size_t active_jobs() const { return active_; }  // not yet terminal
  const PassStats& stats() const { return stats_; }
  PowerView power() const;
  double cluster_power_w() const;
  const EngineConfig& config() const { return config_; }
  std::uint64_t state_version() const { return state_version_; }
  // The jobs changed (Job::version moved) from sequence number `from` on, for
  // a consumer that keeps a view of each job across passes (the Lua host's
  // job tables) and refreshes only those; nullopt when no longer kept (the
  // consumer then checks every view). touched_end() is the next number.
  std::uint64_t touched_end() const { return touched_.end(); }
  std::optional<std::span<const JobId>> touched_since(std::uint64_t from) const {
    return touched_.since(from);
  }

 private:
  friend class PassContext;

  Job* job_mut(JobId id);
  void transition(Job& job, JobState to, EventType type, std::string message = {});
  // By reference: an event is built once and handed to every sink and policy.
  void emit(Event&& event);
  void touch(Job& job);
  // A job joins or leaves running_ (and with it the release index).
  void add_running(Job& job);
  void drop_running(const Job& job);
  void account_allocation(Job& job);
  void enact(const Action& action);
  void enact_start(Job& job, int nodes, const std::vector<NodeIndex>& placement);
  // ---- invasive partitions (engine_cores.cpp)
  // The node's cores are tracked when it is in an invasive partition.
  void track_cores(NodeIndex node);
  // A job of an invasive partition starts on `cores` (checked by the pass).
  void enact_start_cores(Job& job, const CoreSet& cores);
  // Gives `job` those cores and their nodes as its allocation (a start, or a
  // restore from the journal).
  void hold_cores(Job& job, const CoreSet& cores);
  // It gives its cores back; a node none of whose cores is busy is idle again.
  void release_cores(Job& job);
  // A resize by cores (checked by the pass): an expand holds the cores that
  // join at once; a shrink's leave when it is done (finish_resize_cores).
  void enact_resize_cores(Job& job, int to, const CoreSet& cores);
  void finish_resize_cores(Job& job, const Resize& resize, bool ok);
  // Suspended: its cores are free for others, it keeps job.run->cores; resumed:
  // it holds them again (checked free by the pass).
  void suspend_cores(Job& job);
  void resume_cores(Job& job);
  // The node is idle again for the node-level view once no core of it is busy.
  void release_if_no_core_busy(NodeIndex node);
  // The jobs holding cores of a node that went down.
  std::vector<JobId> core_holders(NodeIndex node) const { return cores_.holders(node); }
  // `leaving`: a shrink's nodes (when not as many as it gives back, the
  // default choice); `why`: added to its job.adapting event's message.
  void enact_resize(Job& job, int to, const std::vector<NodeIndex>& leaving = {},
                    const std::string& why = {});
  void enact_suspend(Job& job);
  void enact_resume(Job& job);
  // ---- drains under malleable jobs (engine_drain.cpp, issue 17 item 4)
  // What a drain does to a job holding draining nodes: shrink it off them
  // now (`to`, `leaving`), later (`later`: it adapts or its resizes are held
  // back), or never (`why_not`).
  struct DrainShrink {
    int to = 0;
    std::vector<NodeIndex> leaving;
    bool later = false;
    std::string why_not;
  };
  DrainShrink plan_drain_shrink(const Job& job) const;
  // Shrinks a malleable job off its draining nodes when its constraints
  // allow; `announce`: publish a node.drain saying why when it cannot.
  void shrink_off_drained(Job& job, bool announce);
  // Jobs whose drain shrink waits for an adaptation to end or a resize hold
  // to pass (tick() and adaptation_done() try again).
  std::set<JobId> drain_waits_;
  // Recent MTCT sums of running jobs (perf_totals), cleared at each
  // adaptation and at the end.
  std::unordered_map<JobId, MtctWindow> mtct_windows_;
  NodePool<decltype(mtct_windows_)> mtct_nodes_;  // with their samples' room
  void drop_mtct_window(JobId id);
  void extend_limit(Job& job, const Resize& resize, bool ok);
  void begin_stop(Job& job, JobState outcome, StopReason reason, std::string why = {});
  void finish(Job& job);
  void release_nodes(Job& job, const std::vector<NodeIndex>& nodes);
  void launch_if_ready(JobId id);
  void requeue_waiting_start(Job& job);
  JobId add_submitted(JobSpec&& spec, JobId id);
  // ---- eligibility (engine_eligibility.cpp)
  // A new or restored PENDING job: its dependency parsed and indexed, then
  // placed in the queue it belongs to.
  void enqueue_pending(Job& job);
  // by_name_: built from every job not yet ended (index_names), then kept
  // as jobs are queued (note_name).
  void index_names();
  void note_name(const Job& job);
  // Re-decides whether a PENDING job may start and moves it between the
  // queues; cancels it when its dependency never can be met and the config
  // says so.
  void refresh_eligibility(Job& job);
  void evaluate_dependency(Job& job);
  Satisfaction singleton_satisfaction(const Job& job) const;
  // After `job` changed state: the jobs waiting on it are decided anew.
  void on_state_change(const Job& job);
  void decide_dependents(JobId id);     // the pending jobs that name `id`, decided anew
  void forget_pending(const Job& job);  // it left PENDING
  std::optional<JobState> known_state(JobId id, bool* started) const;
  void release_begun();
  // A job's priority and factors as of now (it is not re-queued).
  void compute_priority(Job& job,
                        const std::unordered_map<std::string, double>* fair_factors = nullptr);
  // ---- job arrays (engine_arrays.cpp)
  struct ArrayState;
  ArrayState& array_state(const Job& job);
  // A task joins its array's count, or waits (JobArrayTaskLimit) when the
  // array's throttle is reached; `started`: it holds nodes (restored).
  void admit_array_task(Job& job, bool started);
  // A task ended: the next throttled tasks of its array (only its array)
  // are let into the queue.
  void array_task_ended(Job& job);
  // One pass of `policy` over partition `partition` (-1: the whole
  // cluster, as without partitions); whether the policy completed it.
  bool run_policy_pass(PassReason reason, int partition, const std::shared_ptr<Policy>& policy);
  // After a failed live pass of a partition's own policy: as
  // note_pass_failure, for that partition.
  void note_partition_failure(Partition& partition, const PolicyFailure& failure);
  // Whether a submission may go to the partition: its state, who may, its limits
  // (and fills in its default time limit).
  Status admit_to_partition(const Partition& partition, JobSpec& spec) const;
  // The same for an invasive partition: rigid, placed by cores only, and
  // no more cores than it has (fills in spec.layout->cores).
  Status admit_cores(int index, JobSpec& spec) const;
  // The partition of a node that is new or renamed: the one naming it, else the default.
  int partition_of_node(const std::string& name) const;
  // Runs policy.schedule(ctx) with the policy marked busy; a C++ exception
  // from it becomes a Runtime failure.
  std::optional<PolicyFailure> call_schedule(Policy& policy, PassContext& ctx);
  // After a failed live pass: counts it, and goes back to the last good
  // policy once revert_after_failures passes in a row have failed.
  void note_pass_failure(const PolicyFailure& failure);

  Clock& clock_;
  Enactor& enactor_;
  EngineConfig config_;
  std::shared_ptr<Policy> policy_;
  std::shared_ptr<Policy> last_good_;  // the last policy that completed a live pass
  std::vector<EventSink*> sinks_;

  Cluster cluster_;
  CoreMap cores_;  // the invasive partitions' nodes (issue 20 item 2)
  std::unordered_map<JobId, std::unique_ptr<Job>> jobs_;
  NodePool<decltype(jobs_)> job_nodes_;  // forgotten jobs' nodes, emptied
  PendingQueue pending_;
  // (start time, id) → the job: a pass walks it without a lookup per job.
  std::map<std::pair<double, JobId>, Job*> running_;
  NodePool<decltype(running_)> running_nodes_;
  // The estimated ends of running_'s jobs, sorted: kept by add_running,
  // drop_running and touch (every change of a job's size or limit touches it).
  ReleaseIndex releases_;
  std::set<JobId> suspended_;  // SUSPENDED jobs
  // STARTING jobs still waiting for promised nodes: id → nodes still missing.
  std::unordered_map<JobId, int> waiting_nodes_;
  // Adaptations under way: id → what was asked.
  std::unordered_map<JobId, Resize> adaptations_;
  std::size_t active_ = 0;
  JobId last_id_ = 0;

  // ---- dependencies and begin times (engine_eligibility.cpp): only the
  // jobs they concern are looked at when something changes, never the queue.
  std::unordered_map<JobId, Dependency> dependencies_;  // pending job → its parsed dependency
  std::unordered_map<JobId, std::vector<JobId>> dependents_;  // job → pending jobs naming it
  // (user, name) → jobs not yet ended with that name, for singleton, the
  // only rule that reads it: built when the first job with a singleton
  // dependency is queued (index_names), kept from then on (issue 15: no
  // string-keyed lookups per job for a rule most workloads never use).
  bool names_indexed_ = false;
  std::map<std::pair<std::string, std::string>, std::set<JobId>> by_name_;
  std::map<std::pair<std::string, std::string>, std::set<JobId>> singletons_;  // pending, waiting
  std::set<std::pair<double, JobId>> begin_waits_;                             // (begin time, id)
  EndedJobLookup ended_lookup_;
  // Jobs forget_job dropped: their end state (known_state, a taken id).
  std::unordered_map<JobId, JobState> forgotten_;
  std::uint64_t event_seq_ = 0;

  FairShare fair_share_;
  double next_priority_calc_ = 0;
  // ---- job arrays (issue 18 item 1): array id → its tasks and throttle.
  struct ArrayState {
    JobId first = 0;  // task ids are first .. first + count - 1
    int count = 0;
    int throttle = 0;           // %N; 0: none
    int admitted = 0;           // tasks neither ended nor throttled
    std::set<JobId> throttled;  // pending tasks held back by the throttle, in id order
  };
  std::unordered_map<JobId, ArrayState> arrays_;

  // ---- partitions (issue 20 item 1)
  std::vector<Partition> partitions_ = {Partition{
      PartitionSpec{
          std::string(kImplicitPartition), {}, true, PartitionState::Up, {}, PartitionKind::Nodes},
      nullptr, nullptr, 0}};
  bool partitioned_ = false;
  int default_partition_ = 0;
  GroupLookup group_lookup_;

  double corridor_lower_w_ = 0;
  double corridor_upper_w_ = 0;
  // Where the draw was at the last check_power: "" inside (or no corridor),
  // else "above" or "below".
  std::string power_side_;

  std::optional<PassReason> due_;
  std::uint64_t state_version_ = 0;
  ChangeLog<JobId> touched_;  // the jobs touch() changed
  std::uint64_t version_at_last_pass_ = ~std::uint64_t{0};
  // Incremental passes (issue 15): the state after the last successful pass
  // of `last_pass_policy_`, moved on by each submission that only appended
  // to the offered queue since; a pass that finds it unchanged tells the
  // policy which jobs are new (PassContext::appended).
  std::uint64_t appended_version_ = ~std::uint64_t{0};
  std::size_t pending_after_pass_ = 0;
  // A pass's containers between passes, with their capacity (PassContext).
  PassContext::Scratch pass_scratch_;
  const Policy* last_pass_policy_ = nullptr;
  bool no_estimate_passed() const;
  // A due pass its policy promised would change nothing (run_pass_if_due skips it).
  bool pass_cannot_act() const;
  // An urgent job was submitted since the last pass: it may preempt to start,
  // so its pass is never skipped.
  bool urgent_since_pass_ = false;
  bool in_pass_ = false;      // a pass (decision and enactment) is under way
  bool policy_busy_ = false;  // a policy's schedule() is running
  PassStats stats_;
};

}  // namespace sched
