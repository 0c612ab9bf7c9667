// schedd's route tables: each socket routes the types docs/protocol.md gives
// it, once; a type routed twice is refused when the table is built.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "handlers/route_table.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/negotiation_info.hpp"
#include "sched/proto/pmi_messages.hpp"
#include "sched/proto/pmix_messages.hpp"
#include "sched/proto/session.hpp"

namespace sched::daemon {
namespace {

void ignore(const Message&) {}

TEST(RouteTable, ATypeRoutedTwiceIsRefused) {
  RouteTable routes("client");
  routes.add("submit", ignore);
  try {
    routes.add("submit", ignore);
    FAIL() << "a second handler for submit was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()), "the client socket's message type 'submit' has two handlers");
  }
  EXPECT_EQ(routes.types(), std::vector<std::string>{"submit"});
}

TEST(RouteTable, ClientSocketRoutesEveryRequest) {
  namespace type = proto::type;
  std::vector<std::string> expected;
  for (std::string_view t :
       {type::kSubmit, type::kCancel, type::kJobsQuery, type::kJobShow, type::kAcct,
        type::kNodesQuery, type::kNodeUpdate, type::kPolicyInfo, type::kPolicyReload,
        type::kCorridorSet, type::kCorridorShow, type::kStats, type::kStepRun, type::kStepAttach,
        type::kJobHold, type::kJobRelease, type::kJobRequeue,
        // ---- issue 22
        type::kPolicyCheck, type::kPolicySet, type::kPolicyHistory, type::kPolicyRollback,
        type::kPolicySnapshot, type::kEventsReplay,     // ---- issue 19
        type::kJobResize,                               // ---- issue 17
        type::kPartitionList, type::kPartitionUpdate,   // ---- issue 20
        type::kNegotiationInfo, type::kSessionOpen}) {  // ---- issue 15
    expected.emplace_back(t);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(client_routes().types(), expected);
}

TEST(RouteTable, AgentSocketRoutesEveryReport) {
  namespace type = proto::type;
  std::vector<std::string> expected;
  for (std::string_view t :
       {type::kAgentRegister, type::kAgentHeartbeat, type::kTaskStarted, type::kTaskExited,
        type::kPerfReport, type::kPowerReport, type::kStepOutput, type::kStepExited,
        type::kStepRunning, type::kAdaptReady, type::kAdaptComplete, type::kAdaptFailed,
        type::kPmiFence, type::kPmiAbort,  // ---- issue 16 item 2
        type::kPmixSpawn, type::kPmixPublish, type::kPmixLookup, type::kPmixConnect,
        type::kResizeRequest}) {
    expected.emplace_back(t);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(agent_routes().types(), expected);
}

}  // namespace
}  // namespace sched::daemon
