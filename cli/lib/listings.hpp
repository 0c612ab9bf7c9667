// The tables of `sched queue`, `sched nodes` and `sched acct`, rendered from
// plain rows so that they can be tested without a daemon.
//
// Columns follow squeue, sinfo and sacct, with two departures: the PARTITION
// column is there only where partitions are configured (issue 20; with the
// one implicit partition a constant column would be noise), and the queue
// shows TIME_LIMIT, which a scheduler with malleable jobs stretches
// (Job::limit_extension) and users want to see. Numbers and times are
// right-aligned, text left-aligned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/job.hpp"
#include "state_codes.hpp"
#include "table.hpp"

namespace sched::cli {

struct QueueRow {
  JobId id = 0;
  std::string name;
  std::string user;
  JobState state = JobState::Pending;
  double elapsed = 0;                 // seconds run so far; 0 while pending
  double limit = 0;                   // walltime in seconds; 0: none
  int nodes = 0;                      // allocated size, or the requested size while pending
  std::vector<std::string> nodelist;  // the allocation, leader first
  std::string reason;                 // why a pending job waits ("Resources", "Priority")
  double expected_start = -1;         // epoch seconds; -1: unknown
  // For `queue --format` (queue_format.hpp); epoch seconds, -1: unknown.
  double submit_time = -1;
  double start_time = -1;
  double end_time = -1;
  // ---- job arrays (issue 18 item 1): the JOBID shown when not `id`:
  // "A_i" for a task, "A_[5-19%4]" for an array's pending tasks on one line.
  std::string display_id;
  std::string shown_id() const { return display_id.empty() ? std::to_string(id) : display_id; }
  std::string partition;  // issue 20 item 1
};

// JOBID NAME USER ST TIME TIME_LIMIT NODES NODELIST(REASON) (with
// `partitions`, PARTITION after JOBID, as squeue); with
// `show_start` (squeue --start) also START_TIME before NODES. The last column
// holds the compressed node list, or "(reason)" for a job without nodes
// ("(None)" when no reason is known).
std::string render_queue(const std::vector<QueueRow>& rows, bool show_start = false,
                         bool partitions = false);

// render_queue a page at a time: rows go in as schedd's pages arrive (each
// made into its cells at once, so the pages need not be kept), the table
// comes out at the end (its column widths need every row).
class QueueTable {
 public:
  explicit QueueTable(bool show_start = false, bool partitions = false);
  void add(const QueueRow& row);
  std::string render() const { return table_.render(); }

 private:
  bool show_start_;
  bool partitions_;
  Table table_;
};

struct NodeRow {
  std::string name;
  NodeState state = NodeState::Idle;
  int cpus = 0;
  std::vector<JobId> jobs;
  std::string containment{};  // cgroup2, cgroup1, none ("" unknown: no agent)
  std::string run_as{};       // "" for a root agent: each job as its user
  std::string partition{};    // issue 20 item 1
  // Issue 20 item 2: a node of an invasive partition: its busy cores; CPUS
  // then reads "busy/total".
  std::optional<int> cpus_alloc{};
};

// One line per node: NODE STATE CPUS JOBS (job ids joined by ',', "-" for
// none), like sinfo -N. `isolation` adds CONTAINMENT and RUN_AS ("users"
// for a root agent, else the one user its unprivileged agent runs; "-" unknown).
// `partitions` adds PARTITION after NODE.
std::string render_nodes(const std::vector<NodeRow>& rows, bool isolation = false,
                         bool partitions = false);

// One line per state present, like plain sinfo: STATE NODES NODELIST, in the
// order idle, mix, alloc, drng, drain, down; node lists keep row order. With
// `partitions`, one line per partition and state (PARTITION first, the
// partitions in the order their first node comes), as sinfo.
std::string render_node_summary(const std::vector<NodeRow>& rows, bool partitions = false);

struct AcctRow {
  JobId id = 0;
  std::string name;
  std::string user;
  JobState state = JobState::Pending;
  int exit_status = 0;  // as Job::exit_status
  double elapsed = 0;   // seconds
  int nodes = 0;
  std::vector<std::string> nodelist;
  double start = -1;                           // epoch seconds; -1: not started
  double end = -1;                             // epoch seconds; -1: not ended
  std::optional<std::uint64_t> max_rss_bytes;  // peak memory (its leader node's cgroup)
  std::optional<double> cpu_s;                 // CPU time there
  std::string reason;                          // how it ended ("out of memory ...")
  // ---- priority (issue 18 item 5)
  std::string account;  // -A; empty: none
  std::string qos;      // --qos
  // ---- job arrays (issue 18 item 1): "A_i" for an array's task (sacct's JobID)
  std::string display_id;
  std::string shown_id() const { return display_id.empty() ? std::to_string(id) : display_id; }
  std::string partition;  // issue 20 item 1
};

// JobID JobName User State ExitCode Elapsed NNodes NodeList Start End, with
// sacct's dashes under the headers; "None assigned" for a job that never had
// nodes, "N/A" for unset times. `usage` adds Account and QOS (issue 18),
// MaxRSS (sacct's K units),
// TotalCPU (HH:MM:SS) and Reason: "N/A" where the node had no cgroup to measure with.
// `partitions` adds Partition after JobName, as sacct's default listing has it.
std::string render_acct(const std::vector<AcctRow>& rows, bool usage = false,
                        bool partitions = false);

// render_acct a page at a time, as QueueTable.
class AcctTable {
 public:
  explicit AcctTable(bool usage = false, bool partitions = false);
  void add(const AcctRow& row);
  std::string render() const { return table_.render(); }

 private:
  Table table_;
  bool usage_;
  bool partitions_;
};

}  // namespace sched::cli
