// Job steps under way (`sched run` inside a job, docs/protocol.md §6): who
// ran each one, where its ranks run, and how many have yet to exit. An
// adaptation changes a step's layout (adaptations.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/job.hpp"
#include "sched/proto/agent_messages.hpp"

namespace sched::daemon {

struct StepRecord {
  std::string client;  // the `sched run` that started it: output and exits go there
  int remaining = 0;   // tasks that have not exited yet
  int tasks = 0;       // the step's current size
  // What every node of it was told (command, workdir, environment); `ranks`
  // and `nodes` of this copy mean nothing: `layout` says where ranks run.
  proto::StepLaunch launch;
  // The step's nodes in order, each with its ranks.
  std::vector<std::pair<std::string, std::vector<int>>> layout;
  // A step started by MPI_Comm_spawn (issue 16 item 2): the step of the
  // rank that spawned it, whose client gets its output and failures.
  std::int64_t parent = 0;
  // An --mpi step's nodes as launched: its MPI library fences over every
  // rank it started with, so a shrink that took a node from the job leaves
  // that node's ranks in the fences (they wait in MPI_Finalize until the
  // others come; issue 16 item 3). Empty: the layout's nodes.
  std::vector<std::string> mpi_nodes;
  // The nodes a fence of the step gathers from.
  std::vector<std::string> fence_nodes() const;
  // ---- MPI expansions (--mall-spawn=mpi, docs/malleable.md "MPI
  // adaptations"). On the adapting step, while an expansion's window is
  // open: what MPI_Comm_spawn must start, the node of each new rank in
  // window order (new ranks old_size, old_size + 1, ...).
  struct MpiExpansion {
    std::uint64_t adaptation = 0;
    int old_size = 0;
    int new_size = 0;
    std::vector<std::string> hosts;      // of the new ranks only
    std::vector<std::string> job_nodes;  // the job's nodes after it
    bool spawned = false;                // the spawn came (one per expansion)
  };
  std::optional<MpiExpansion> expansion;
  // On the step such a spawn started: the adapting step whose ranks its
  // processes become. Their exits count in that step, so this record only
  // keeps the spawn's PMIx namespace (fences, connects) and goes with it.
  std::int64_t adapt_of = 0;
};

class StepTable {
 public:
  // A new step id for the job: 1, 2, ... (never reused while schedd runs).
  std::int64_t next_id(JobId job) { return ++last_[job]; }
  void add(JobId job, std::int64_t step, StepRecord record) {
    steps_[{job, step}] = std::move(record);
  }
  StepRecord* find(JobId job, std::int64_t step);
  // The steps MPI_Comm_spawn started from `step` (their `parent`).
  std::vector<std::int64_t> children(JobId job, std::int64_t step) const;
  // The job's newest step that still runs, or nothing (an expansion's
  // spawned steps are part of the step they grew: not counted).
  std::pair<std::int64_t, StepRecord*> newest(JobId job);
  // One task of the step ended; the record goes once none is left, and then
  // the client to tell is returned ("" when none attached).
  std::optional<std::string> task_exited(JobId job, std::int64_t step);
  // The records of the steps MPI expansions of `step` spawned (adapt_of),
  // removed; their ids. For when `step` ended.
  std::vector<std::int64_t> drop_adapted(JobId job, std::int64_t step);
  // A step an agent runs (after a restart of the engine, which forgot it):
  // its processes on `node` join the step's record, created when missing
  // (with no client until one attaches). False when that node was known.
  bool adopt(const std::string& node, const proto::StepLaunch& launch);

 private:
  std::map<std::pair<JobId, std::int64_t>, StepRecord> steps_;
  std::map<JobId, std::int64_t> last_;
};

}  // namespace sched::daemon
