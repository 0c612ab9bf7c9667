// The message bodies the message fuzz target reads: every body a peer can
// send or receive (docs/protocol.md). An input's first byte is an index into
// this list (modulo its size).
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "sched/proto/messages.hpp"

namespace sched::fuzz {

using namespace sched::proto;

using Bodies = std::tuple<
    // client ↔ schedd
    SubmitRequest, SubmitReply, JobRef, JobsQuery, JobList, JobReply, AcctQuery, NodeList,
    NodeUpdate, PolicyInfoReply, Corridor, StatsReply, StepRun, StepStarted, StepRef, StepResized,
    // agent ↔ schedd
    AgentRegister, RegisterReply, AgentHeartbeat, JobLaunch, JobKill, TaskStarted, TaskExited,
    TaskExitedReply, StepLaunch, StepRunning, PerfRequest, PerfReport, PowerReport, AdaptBegin,
    AdaptReady, AdaptGo, AdaptReport, AdaptAbort,
    // job process ↔ agent, step output, events
    ProcInit, ProcInitReply, ProcPhase, ProcFinalize, ProcAdaptNotice, ProcAdaptBegin,
    ProcAdaptBeginReply, ProcAdaptCommit, StepOutput, StepExited, EventMsg,
    // added later, at the end so that the corpus's first bytes keep their bodies
    JobTaskRef,
    // ---- issue 19: events.replay
    EventsReplayRequest, EventsReplayReply,
    // ---- issue 16 item 2: the PMI fence of MPI steps
    PmiFence, PmiFenceDone, PmiAbort, PmiStepFailed>;

constexpr std::size_t kBodies = std::tuple_size_v<Bodies>;

// The index of T in Bodies: the byte that makes the target read a body as T.
template <class T, std::size_t I = 0>
constexpr char body_index() {
  static_assert(I < kBodies, "not a message body");
  if constexpr (std::is_same_v<T, std::tuple_element_t<I, Bodies>>) {
    return static_cast<char>(I);
  } else {
    return body_index<T, I + 1>();
  }
}

}  // namespace sched::fuzz
