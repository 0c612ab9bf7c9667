// One node's PMI-1 server for one job step: the local ranks' connections
// (bytes in, answers out) and the step's key-value space. What the server
// cannot do alone is the fence: when every local rank has entered a barrier,
// take_fence() hands over the entries put here since the last fence; the
// caller gathers them across the step's nodes and gives the merged space back
// with fence_done(), which releases the barrier. Pure state, no I/O, not
// thread-safe. Malformed input gets an error answer and never throws.
//
// Commands (MPICH's simple client): init, get_maxes, get_appnum,
// get_my_kvsname, get_universe_size, put, get, barrier_in, finalize, abort.
// A rank that calls abort, or sends spawn (not supported), fails the step:
// failure() says so.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::pmi {

struct StepInfo {
  std::string kvsname;           // the step's KVS name (PMI_JOBID)
  int size = 0;                  // ranks in the step (PMI_SIZE)
  std::vector<int> local_ranks;  // the ranks this node serves (PMI_RANK)
  // Entries every rank can get from the start, such as PMI_process_mapping
  // (process_mapping.hpp).
  std::map<std::string, std::string> preset;
};

// What get_maxes announces; put enforces the key and value lengths.
inline constexpr int kKvsNameMax = 256;
inline constexpr int kKeyMax = 256;
inline constexpr int kValueMax = 4096;

struct Failure {
  int rank = 0;
  std::string message;
};

class NodeServer {
 public:
  explicit NodeServer(StepInfo info);

  // Bytes read from local rank `rank`'s connection. An unknown rank is
  // ignored.
  void receive(int rank, std::string_view bytes);
  // What to write to the rank's connection now (and forgets it).
  std::string take_output(int rank);

  // Once per barrier, when every local rank that has not finalized is in
  // it: the entries put here since the last fence.
  std::optional<std::map<std::string, std::string>> take_fence();
  // The fence is complete: `entries` (the step's new entries from every
  // node) join the space, and every local rank leaves the barrier.
  void fence_done(const std::map<std::string, std::string>& entries);
  // Fences handed over so far: after take_fence(), the number of that fence
  // (1, 2, ...), which names it across the step's nodes.
  int fences() const { return fences_; }

  // The first rank that aborted or broke the protocol beyond answering.
  const std::optional<Failure>& failure() const { return failure_; }
  bool initialized(int rank) const;
  bool finalized(int rank) const;
  // The rank's connection is gone (it exited): it counts as finalized for
  // barriers only if it finalized before.
  void disconnect(int rank);

 private:
  struct Rank {
    std::string in, out;
    bool initialized = false;
    bool in_barrier = false;
    bool finalized = false;
    bool gone = false;
  };
  void handle(int rank, Rank& state, std::string_view line);
  void reply(Rank& state, std::string name,
             std::vector<std::pair<std::string, std::string>> args = {});
  void fail(int rank, std::string message);

  StepInfo info_;
  std::map<int, Rank> ranks_;
  std::map<std::string, std::string> space_;    // visible to every rank
  std::map<std::string, std::string> pending_;  // put here since the last fence
  bool fence_out_ = false;                      // handed over, not done yet
  int fences_ = 0;
  std::optional<Failure> failure_;
};

}  // namespace sched::pmi
