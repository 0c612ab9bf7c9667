// A job's processes ↔ their node's agent (docs/protocol.md §7, §8): the
// malleable library (malleable/) over the agent's local endpoint
// $SCHED_AGENT_ENDPOINT, and the agent's side of it (nodeagent/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kProcInit = "proc.init";
inline constexpr std::string_view kProcPhase = "proc.phase";
inline constexpr std::string_view kProcFinalize = "proc.finalize";
inline constexpr std::string_view kProcAdaptBegin = "proc.adapt_begin";
inline constexpr std::string_view kProcAdaptCommit = "proc.adapt_commit";
// agent → process notices (no reply): an adaptation waits; it was withdrawn.
inline constexpr std::string_view kProcAdaptPending = "proc.adapt_pending";
inline constexpr std::string_view kProcAdaptAbort = "proc.adapt_abort";
// Issue 17 item 1: an evolving job's own request to grow or shrink (process
// → agent, answered once schedd took it), and its later answer (agent →
// process notice).
inline constexpr std::string_view kProcResize = "proc.resize";
inline constexpr std::string_view kProcResizeAnswer = "proc.resize_answer";
}  // namespace type

// process → its node's agent: "I am rank R of job J's step S" (the library's
// init). The reply says whether the process is one the job started with
// (existing) or one an expansion added (new).
struct ProcInit {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int rank = 0;
  std::int64_t pid = 0;
  std::string endpoint;  // where this process receives data from its peers
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("rank", rank);
    v("pid", pid);
    v("endpoint", endpoint);
  }
};

struct ProcInitReply {
  std::string status = "existing";  // "existing" or "new"
  int size = 0;                     // processes of the step
  template <class V>
  void fields(V& v) {
    v("status", status);
    v("size", size);
  }
};

// process → agent: one phase of the application, for MTCT (no reply).
struct ProcPhase {
  std::int64_t job = 0;
  int rank = 0;
  double comm_s = 0;
  double compute_s = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("rank", rank);
    v("comm_s", comm_s);
    v("compute_s", compute_s);
  }
};

struct ProcFinalize {
  std::int64_t job = 0;
  int rank = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("rank", rank);
  }
};

// agent → process notices: an adaptation waits (proc.adapt_pending), or was
// withdrawn before its window opened (proc.adapt_abort).
struct ProcAdaptNotice {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
  }
};

// process → agent: this process enters the adaptation window. Answered when
// the window opens (every process of the job has entered), or with the error
// code "aborted" when the adaptation was rolled back.
struct ProcAdaptBegin {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int rank = 0;  // its current rank (a new process: its new rank)
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("rank", rank);
  }
};

struct ProcAdaptBeginReply {
  std::uint64_t adaptation = 0;
  int old_size = 0;
  int new_size = 0;
  int window_rank = 0;
  std::vector<int> old_ranks;  // by window rank, as in adapt.begin
  std::vector<int> new_ranks;
  std::vector<std::string> endpoints;  // by window rank
  // A job of an invasive partition (issue 20 item 2): its cores in all
  // before and after, and after on this process's node.
  std::optional<int> old_cores;
  std::optional<int> new_cores;
  std::optional<int> node_cores;
  // The node of each window rank, when the application starts the new
  // processes itself (--mall-spawn=mpi): what it passes as MPI's "host".
  std::optional<std::vector<std::string>> hosts;
  template <class V>
  void fields(V& v) {
    v("adaptation", adaptation);
    v("old_size", old_size);
    v("new_size", new_size);
    v("window_rank", window_rank);
    v("old_ranks", old_ranks);
    v("new_ranks", new_ranks);
    v("endpoints", endpoints);
    v("old_cores", old_cores);
    v("new_cores", new_cores);
    v("node_cores", node_cores);
    v("hosts", hosts);
  }
};

// process → agent: its data is in place; it leaves the window.
struct ProcAdaptCommit {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  int window_rank = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
    v("window_rank", window_rank);
  }
};

// ---- issue 17 item 1: evolving requests (docs/malleable.md, docs/protocol.md §8)

// process → agent: job J asks to grow or shrink to `nodes` nodes. The agent
// relays it to schedd (resize.request) and relays schedd's ResizeAnswer back
// as the reply.
struct ProcResize {
  std::int64_t job = 0;
  std::string op;  // "grow" or "shrink"
  int nodes = 0;   // the size asked for
  std::string reason;
  double timeout_s = 0;  // dropped (expired) after this long; 0: schedd's default
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("op", op);
    v("nodes", nodes);
    v("reason", reason);
    v("timeout_s", timeout_s);
  }
};

// Where a request stands: the reply to proc.resize, resize.request and
// job.resize, and the later notices (proc.resize_answer, resize.answer).
// state: "pending" (taken, waiting for the policy), "granted" (the
// adaptation to `nodes` has begun: it arrives as any adaptation does),
// "refused" (code and message say why: a wire error code, docs/protocol.md
// §3) or "expired" (not granted within its timeout; dropped).
struct ResizeAnswer {
  std::int64_t job = 0;
  std::uint64_t request = 0;  // schedd's id of the request (0: refused before it had one)
  std::string state;
  int nodes = 0;  // granted: the size the adaptation goes to; else the size asked
  std::string code;
  std::string message;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("request", request);
    v("state", state);
    v("nodes", nodes);
    v("code", code);
    v("message", message);
  }
};

}  // namespace sched::proto
