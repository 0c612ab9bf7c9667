// The discrete-event simulator (docs/design.md §7): a virtual clock and an event
// queue drive the real engine with its real Lua policy. The simulator is the
// engine's enactor: a started job progresses through its work at the rate
// its application model gives for its size (sim/app_model.hpp), stops for
// the cost of each adaptation, answers performance requests with its MTCT,
// makes an evolving job's own requests, and ends when its work is done (or
// its time limit is up); a stopped job ends at once.
//
// Events at one timestamp are handled in this order: completions (and
// adaptation completions), time limits, then submissions (by submit time,
// then job id), then other timed events (corridor changes, node failures),
// then ticks; then one scheduling pass.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/driver.hpp"
#include "sched/engine.hpp"
#include "sched/lua_policy.hpp"
#include "sched/sim/metrics.hpp"
#include "sched/sim/power.hpp"
#include "sched/sim/workload.hpp"

namespace sched::sim {

struct SimConfig {
  int nodes = 0;  // 0: the workload's cluster size
  // Seconds between ticks; 0 turns ticks off. Ticks are only simulated for
  // policies that declare themselves time dependent: for the others a tick
  // that changed nothing gives no pass anyway.
  double tick_s = 60;
  // How long cluster power may stay outside the corridor before it counts
  // as a violation (docs/design.md §8); negative: one tick.
  double power_grace_s = -1;
  EngineConfig engine;
  // The clock before the run (a twin: the snapshot's time, so that the jobs
  // it restores keep their times; sim/twin.hpp).
  double start = 0;
  // Events after this time are not handled: the run stops there (a twin's
  // horizon); nothing: the run goes on until the workload is done.
  std::optional<double> until;
  // The engine drops each job once it ended and its record is taken
  // (issue 15: memory per job); false keeps them in engine() after the run
  // (a twin reads them).
  bool forget_ended_jobs = true;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in id order
  Metrics metrics;
  PassStats passes;
  int rejected = 0;                   // jobs the engine refused at submission (counted as skipped)
  std::vector<ResizeRecord> resizes;  // in the order they happened
  std::vector<PowerSample> power;     // cluster power whenever it or the corridor changed
  std::vector<PowerInterval> violations;  // when power was outside the corridor (counted ones)
  int policy_errors = 0;                  // passes dropped because the policy failed
  std::string first_policy_error;
  double end_time = 0;
};

// A node's name in the simulated cluster: n0001, n0002, ...
std::string sim_node_name(int index);

class Simulator : private Enactor, private EventSink {
 public:
  Simulator(const Workload &workload, SimConfig config);
  // The jobs from `jobs`, made one at a time as they are submitted; the
  // rest (cluster, timed events, skipped records) from `workload`, whose
  // own jobs must be empty. Both must outlive the simulator.
  Simulator(const Workload &workload, const JobSource &jobs, SimConfig config);
  ~Simulator() override;

  Engine &engine() { return engine_; }
  // Installs the policy (before run).
  void set_policy(std::shared_ptr<Policy> policy) { engine_.set_policy(std::move(policy)); }
  // A workload job marked `restored` that the caller put back in the engine
  // as running (Engine::restore_job, before run): it runs on from `done_s`
  // seconds of its work (sim/twin.hpp).
  void adopt_running(JobId id, double done_s);
  // Runs the whole workload to its end (or to config.until).
  SimResult run();

 private:
  // Begin: the --begin time of a waiting job (issue 18), a tick of its own.
  enum class Kind { Milestone, AdaptationEnd, Walltime, Submission, Timed, Tick, Begin };
  struct Pending {
    double time;
    int order;          // class within a timestamp
    std::uint64_t seq;  // submissions: job id; others: insertion order
    Kind kind;
    std::size_t index;  // submissions: workload job; timed: event
    JobId job;
    std::uint64_t generation;  // job events: the run generation they belong to
    bool operator>(const Pending &other) const;
  };

  // A started job's progress through its work.
  struct Run {
    std::size_t index = 0;   // workload job
    int nodes = 1;           // the size it progresses on
    double done = 0;         // seconds of work done, at the requested size
    double since = 0;        // when `done` was last brought up to date
    bool adapting = false;   // no progress until the adaptation ends
    bool suspended = false;  // no progress until resumed (its work left is kept)
    int adapt_to = 0;
    std::size_t next_request = 0;  // evolving: the next step of the model
    std::uint64_t generation = 0;  // bumped whenever its scheduled events go stale
    // What its processes would have measured since its last adaptation
    // (seconds in communication and in computation), as the agents' sums.
    double comm_s = 0;
    double compute_s = 0;
  };

  void push(Pending event);
  void handle(const Pending &event);
  void schedule_tick(double after);

  std::size_t job_count() const { return source_ ? source_->size() : workload_.jobs.size(); }
  // A workload job that has been submitted and has not ended.
  const WorkloadJob &job_at(std::size_t index) const {
    return source_ ? made_.at(index) : workload_.jobs[index];
  }
  const WorkloadJob &workload_job(const Run &run) const { return job_at(run.index); }
  // Queues the submission of the next workload job (one at a time, in
  // submission order; restored jobs are not submitted).
  void push_next_submission();
  // The record of a job for the result (jobs.csv).
  JobRecord record_of(const Job &job) const;
  // Drops what is kept of the jobs that ended since the last call.
  void drop_ended();
  Run *live_run(const Pending &event);  // nullptr when the event is stale
  bool is_stale(const Pending &event) const;
  // Brings the run's work and its measured sums up to now; the sums go to
  // the engine's MTCT window (Engine::perf_totals, not published).
  void advance(Run &run);
  // Adds to the sums what running from `from` to `to` seconds of work took:
  // split at phase boundaries, t seconds of a phase of MTCT m are t·m/(1+m)
  // in communication and t/(1+m) in computation.
  void measure(Run &run, double from, double to) const;
  double rate(const Run &run) const;
  // A run's size for the application model: its nodes, or in an invasive
  // partition its cores (issue 20 item 2), and the size its runtime is at.
  int model_size(const Job &job) const;
  int requested_size(const WorkloadJob &job) const;
  // Schedules the run's next milestone (completion, phase change or evolving
  // request) and its time limit, under a fresh generation.
  void plan(JobId id, Run &run);
  // Schedules the run's time limit under its current generation, unless it
  // comes after `milestone`, the time of that generation's milestone.
  void plan_limit(JobId id, const Run &run,
                  double milestone = std::numeric_limits<double>::infinity());
  void reach_milestone(JobId id, Run &run);
  void end_adaptation(JobId id, Run &run);
  // The job's MTCT over the engine's window (sim/app_model.hpp's model
  // integrated over the work), published to the policy.
  void report_perf(JobId id);

  // Enactor
  void start(const Job &job) override;
  void resize(const Job &job, const Resize &resize) override;
  void stop(const Job &job, StopReason reason) override;
  void request_perf(const Job &job) override;
  void suspend(const Job &job) override;
  void resume(const Job &job) override;
  // EventSink: notes policy errors and resizes for the result.
  void on_event(const Event &event) override;

  const Workload &workload_;
  const JobSource *source_ = nullptr;  // null: the jobs are workload_.jobs
  // Jobs made from source_, submitted or about to be, not yet ended.
  std::unordered_map<std::size_t, WorkloadJob> made_;
  std::size_t next_submission_ = 0;  // the workload job to submit next
  // Records of the jobs that ended (the others' are made at the run's end).
  std::vector<JobRecord> records_;
  std::vector<JobId> ended_;  // since the last drop_ended()
  SimConfig config_;
  ManualClock clock_;
  Engine engine_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> queue_;
  std::uint64_t seq_ = 0;
  // Job id → workload job, for the jobs submitted (or restored) that have not ended.
  std::unordered_map<JobId, std::size_t> workload_index_;
  std::unordered_map<JobId, Run> runs_;  // started jobs that have not ended
  std::vector<int> start_sizes_;         // by workload job: the size of its last start
  std::uint64_t generations_ = 0;
  // The latest time limit plan_limit left out (it would have been stale):
  // run() ends a stuck run as if it were queued until then.
  double limit_left_out_ = -std::numeric_limits<double>::infinity();
  // What the enactor knows at once (a start confirmed, a stopped job's end,
  // performance data), fed to the engine after the pass that caused it.
  DeferredResults results_;
  std::vector<ResizeRecord> resizes_;
  std::vector<PowerSample> power_;
  std::uint64_t power_version_ = 0;  // the engine's state_version() at the last sample
  // Whether any job draws more than an idle node (has a power model): if
  // none does, cluster power moves only with timed events (nodes, corridor).
  bool jobs_draw_power_ = false;
  bool timed_event_since_sample_ = true;
  void sample_power();
  std::size_t submitted_ = 0;
  int rejected_ = 0;
  int policy_errors_ = 0;
  std::string first_policy_error_;
  bool tick_scheduled_ = false;
  std::optional<double> begin_planned_;  // the Begin event queued, if any
};

}  // namespace sched::sim
