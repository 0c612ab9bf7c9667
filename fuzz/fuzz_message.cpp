// The wire decoder, as schedd, the agents and the job processes use it: the
// envelope first (decode), then the body read as each message type of the
// protocol, since a peer may send any body under any type. Bad input is a
// ProtoError with a code; nothing else may come out.
#include <tuple>

#include "fuzz_target.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/messages.hpp"

namespace {

using namespace sched::proto;

// Every body type a peer can send or receive (docs/protocol.md).
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
    ProcAdaptBeginReply, ProcAdaptCommit, StepOutput, StepExited, EventMsg>;

template <class T>
void read_as(const Envelope& envelope) {
  try {
    (void)envelope.body_as<T>();
  } catch (const ProtoError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const Envelope envelope = decode(data, size);
    std::apply([&](auto... body) { (read_as<decltype(body)>(envelope), ...); }, Bodies{});
  } catch (const ProtoError&) {
  }
  return 0;
}
