// MPI_Comm_spawn and the PMIx operations around it for --mpi=pmix steps
// (issue 16 item 2, docs/protocol.md §6): a rank asks its node's PMIx
// server to spawn (pmix.spawn, checked by schedd, which starts the children
// as a new step of the job), the two sides find each other through keys
// they publish and look up (pmix.publish, pmix.lookup), and connect
// (pmix.connect: a fence over the nodes of both steps that also carries
// each rank's PMIx data, so every node can answer its ranks' questions
// about ranks elsewhere).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kPmixSpawn = "pmix.spawn";             // agent → schedd (reply)
inline constexpr std::string_view kPmixPublish = "pmix.publish";         // agent → schedd
inline constexpr std::string_view kPmixLookup = "pmix.lookup";           // agent → schedd
inline constexpr std::string_view kPmixLookupDone = "pmix.lookup_done";  // schedd → agent
inline constexpr std::string_view kPmixConnect = "pmix.connect";         // agent → schedd
inline constexpr std::string_view kPmixConnectDone = "pmix.connect_done";  // schedd → agents
}  // namespace type

// The PMIx namespace of a step's ranks, the same on every node.
inline std::string pmix_nspace(std::int64_t job, std::int64_t step) {
  return "sched." + std::to_string(job) + "." + std::to_string(step);
}

// agent → schedd, a request: rank `rank` of step `step` on `node` called
// PMIx_Spawn (MPI_Comm_spawn). `hosts`: where the children go, one node
// name per child ("n3,n3,n4,n4") or with counts ("n3:2,n4:2"); empty:
// the job's nodes. The reply is PmixSpawned, or an error that the agent
// hands back to the MPI call.
struct PmixSpawn {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  int tasks = 0;  // maxprocs
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the parent step's
  std::string workdir;                     // empty: the parent step's
  std::string hosts;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("tasks", tasks);
    v("argv", argv);
    v("env", env);
    v("workdir", workdir);
    v("hosts", hosts);
  }
};

// schedd's reply to pmix.spawn: the children's step, already launched.
struct PmixSpawned {
  std::int64_t step = 0;
  std::vector<std::string> nodes;
  template <class V>
  void fields(V& v) {
    v("step", step);
    v("nodes", nodes);
  }
};

// agent → schedd: keys a rank published (PMIx_Publish), visible to every
// rank of the job until the job ends.
struct PmixPublish {
  std::int64_t job = 0;
  std::string node;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("node", node);
    v("entries", entries);
  }
};

// agent → schedd: a rank looks keys up (PMIx_Lookup). With `wait`, the
// answer comes once every key is published; without, at once.
struct PmixLookup {
  std::int64_t job = 0;
  std::string node;
  std::uint64_t id = 0;  // the agent's, echoed in the answer
  std::vector<std::string> keys;
  bool wait = false;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("node", node);
    v("id", id);
    v("keys", keys);
    v("wait", wait);
  }
};

// schedd → the agent that looked up: the keys found (all of them after a
// wait; absent ones were not published).
struct PmixLookupDone {
  std::int64_t job = 0;
  std::uint64_t id = 0;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("id", id);
    v("entries", entries);
  }
};

// agent → schedd: every local rank of `procs` on `node` called
// PMIx_Connect. `procs`: "<step>:<rank>" or "<step>:*" (all its ranks);
// `id`: the connect's name, the same on every node (its sorted procs and
// how many times this node saw them connect); `entries`: the PMIx data of
// each rank here, "<step>.<rank>" → Z85 (pmix_map.hpp).
struct PmixConnect {
  std::int64_t job = 0;
  std::string node;
  std::string id;
  std::vector<std::string> procs;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("node", node);
    v("id", id);
    v("procs", procs);
    v("entries", entries);
  }
};

// Where a step's ranks run, for a node that registers its namespace
// without ranks of it.
struct PmixStepMap {
  std::int64_t step = 0;
  int tasks = 0;
  std::vector<std::string> nodes;
  std::string distribution;
  std::optional<std::string> parent;  // "<namespace>:<rank>" of a spawned step
  template <class V>
  void fields(V& v) {
    v("step", step);
    v("tasks", tasks);
    v("nodes", nodes);
    v("distribution", distribution);
    v("parent", parent);
  }
};

// schedd → every node of the connect: it is complete (error empty), with
// every node's entries and the steps' maps; or it failed (a step in it
// ended, a step is not the job's), with why.
struct PmixConnectDone {
  std::int64_t job = 0;
  std::string id;
  std::string error;
  std::vector<PmixStepMap> steps;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("id", id);
    v("error", error);
    v("steps", steps);
    v("entries", entries);
  }
};

}  // namespace sched::proto
