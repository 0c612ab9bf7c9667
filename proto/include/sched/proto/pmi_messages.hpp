// The PMI fence of an MPI step across its nodes (issue 16 item 2,
// docs/protocol.md §6): each node's agent serves its ranks' PMI
// connections; when all of them are in a barrier it sends this node's new
// key-value entries to schedd, which answers every node of the step with all
// of them once the last node is in. A rank that aborts (or dies before it
// finalized) fails the whole step: schedd tells every node to kill its ranks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kPmiFence = "pmi.fence";             // agent → schedd
inline constexpr std::string_view kPmiFenceDone = "pmi.fence_done";    // schedd → agents
inline constexpr std::string_view kPmiAbort = "pmi.abort";             // agent → schedd
inline constexpr std::string_view kPmiStepFailed = "pmi.step_failed";  // schedd → agents
}  // namespace type

// agent → schedd: every rank of the step on `node` entered fence number
// `fence` (1, 2, ... in each node's own count); `entries`: what they put
// since the previous fence.
struct PmiFence {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  std::int64_t fence = 0;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("fence", fence);
    v("entries", entries);
  }
};

// schedd → every node of the step: fence `fence` is complete; `entries`:
// the union of what every node sent for it.
struct PmiFenceDone {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::int64_t fence = 0;
  std::map<std::string, std::string> entries;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("fence", fence);
    v("entries", entries);
  }
};

// agent → schedd: rank `rank` of the step on `node` aborted or ended before
// it finalized: the step cannot go on.
struct PmiAbort {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  std::string message;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("message", message);
  }
};

// schedd → every node of the step: kill its ranks; `message` says why (it
// becomes the killed ranks' step.exited message).
struct PmiStepFailed {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string message;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("message", message);
  }
};

}  // namespace sched::proto
