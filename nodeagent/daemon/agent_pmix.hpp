// The node's PMIx server for steps run with --mpi=pmix (issue 16 item 2,
// docs/protocol.md §6), the way Slurm's mpi/pmix plugin hosts one in each
// slurmd step: Debian's libpmix serves the ranks (Open MPI's PMIx client),
// and this class is the agent's side of it. It registers each step's
// namespace with the step's process map and each local rank as a client,
// and gives the rank its PMIX_* environment. What the ranks do (connect,
// finalize, abort, enter a fence) comes from libpmix's own thread: it is
// queued here, and the agent's loop takes it (wake_fd is readable then)
// and carries fences across nodes through schedd (pmi.fence), as for PMI-1.
//
// One per agent process (libpmix allows one server per process), started
// on the first --mpi=pmix step. Its files go under its own tmpdir: several
// agents on one host (virtual nodes) must not share one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sched/agent/job_env.hpp"
#include "sched/agent/pmix_map.hpp"
#include "sched/agent/types.hpp"
#include "sched/proto/pmix_messages.hpp"

namespace sched::agent {

struct PmixEvent {
  // Spawn, Publish, Lookup, Connect: what a rank asked for MPI_Comm_spawn
  // (docs/protocol.md §6); ConnectReady: this node's data for a Connect.
  enum class Kind {
    Connected,
    Finalized,
    Aborted,
    Fence,
    Spawn,
    Publish,
    Lookup,
    Connect,
    ConnectReady
  };
  Kind kind = Kind::Connected;
  JobId job = 0;
  std::int64_t step = 0;
  int rank = 0;
  int status = 0;          // Aborted: the status the rank gave PMIx_Abort
  std::string data;        // Aborted: its message; Fence: this node's data for the fence
  std::uint64_t id = 0;    // Spawn, Lookup, Connect, ConnectReady: for the answer
  proto::PmixSpawn spawn;  // Spawn: what to start (job, step, rank, node unset)
  // Publish: the keys; ConnectReady: "<step>.<rank>" → each local rank's data (Z85)
  std::map<std::string, std::string> entries;
  std::vector<std::string> keys;   // Lookup
  bool wait = false;               // Lookup
  std::vector<std::string> procs;  // Connect: "<step>:<rank>" or "<step>:*"
  std::string connect_id;          // Connect: the same on every node
  bool fence = false;              // Connect: a fence over `procs`, with `data`
};

class PmixServer {
 public:
  // Starts libpmix's server as node `node` (PMIX_HOSTNAME), its files under
  // `tmpdir` (made here). Throws std::runtime_error when libpmix refuses.
  PmixServer(const std::string& node, const std::string& tmpdir);
  ~PmixServer();  // PMIx_server_finalize
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // Registers rank `rank` of the step (this node is `map.nodes[node]`) as a
  // client run as uid/gid, and the step's namespace first when it is new
  // here; adds the rank's PMIx variables to `env`. Throws
  // std::runtime_error with libpmix's reason.
  // `parent`: a spawned step's spawner, "<namespace>:<rank>".
  void add_rank(JobId job, std::int64_t step, const PmixMap& map, int node, int rank, uid_t uid,
                gid_t gid, EnvPairs& env, const std::optional<std::string>& parent = std::nullopt);
  // Registers a step of the job with no rank here (the other side of a
  // connect), when it is new here. Throws std::runtime_error.
  void add_remote(JobId job, std::int64_t step, const PmixMap& map,
                  const std::optional<std::string>& parent);

  // ---- MPI_Comm_spawn: the answers to Spawn, Lookup and Connect events.
  // The spawn's children are namespace `children` (nullopt: refused).
  void spawn_done(std::uint64_t id, const std::optional<std::string>& children);
  void lookup_done(std::uint64_t id, const std::map<std::string, std::string>& entries);
  // Asks libpmix for the data of these local ranks ((namespace, rank));
  // a ConnectReady event carries it.
  void gather(std::uint64_t id, const std::vector<std::pair<std::string, int>>& procs);
  // Data of ranks elsewhere that a connect brought ("<step>.<rank>" → Z85 of
  // the job `job`): libpmix asks for it (direct modex) once the ranks talk.
  void keep_modex(JobId job, const std::map<std::string, std::string>& entries);
  // A fence over some procs (event.fence) is answered with `fence_data`.
  void connect_done(std::uint64_t id, bool ok, const std::string& fence_data = {});
  // The step has no rank left here: its namespace goes, and a fence of it
  // still open is answered with an error.
  void drop_step(JobId job, std::int64_t step);
  // Answers the step's open fence with every node's data, concatenated
  // (what libpmix expects from its host); false when none is open.
  bool fence_done(JobId job, std::int64_t step, std::string data);

  // Readable while events wait; take_events empties it.
  int wake_fd() const { return wake_fd_; }
  std::vector<PmixEvent> take_events();

  // The step's PMIx namespace ("sched.<job>.<step>").
  static std::string nspace(JobId job, std::int64_t step);

  // ---- for libpmix's callbacks (agent_pmix.cpp), on its thread
  struct Fence;
  struct Pending;  // a spawn, lookup or connect libpmix waits on
  struct Gather;
  void push(PmixEvent event);
  std::uint64_t park(Pending* pending);
  Pending* take(std::uint64_t id);
  std::string next_connect_id(const std::string& procs);
  bool modex(const std::string& nspace, int rank, std::string& data);
  void gathered(Gather* gather, const std::string& key, std::string data, bool ok);
  bool find_step(const char* nspace, JobId& job, std::int64_t& step);
  void open_fence(JobId job, std::int64_t step, Fence* fence);

 private:
  int wake_fd_ = -1;
  std::mutex mutex_;  // guards what follows: libpmix's thread and the agent's
  std::vector<PmixEvent> events_;
  std::map<std::string, std::pair<JobId, std::int64_t>> steps_;  // by namespace
  std::map<std::pair<JobId, std::int64_t>, Fence*> fences_;      // open, by step
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, Pending*> pending_;
  std::map<std::string, int> connects_;  // how often each set of procs connected here
  std::map<std::pair<std::string, int>, std::string> modex_;  // (namespace, rank) → data
  std::set<std::string> remote_;  // namespaces registered with no rank here
  void register_nspace(JobId job, std::int64_t step, const PmixMap& map, int node,
                       const std::optional<std::string>& parent);
};

}  // namespace sched::agent
