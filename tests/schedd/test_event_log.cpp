// schedd's log line of each event (schedd/event_log.hpp, docs/admin.md
// "Logs"): the stable key=value format tools parse, and its levels.
#include <gtest/gtest.h>

#include "event_log.hpp"

namespace sched::daemon {
namespace {

Job failed_job() {
  Job job;
  job.id = 7;
  job.spec.user = "alice";
  job.spec.name = "big sim";
  job.state = JobState::Failed;
  job.exit_status = 137;
  job.run.edit().end_reason = "out of memory";
  return job;
}

TEST(EventLog, AJobEndNamesJobUserNameStatesExitAndReason) {
  Event event;
  event.seq = 42;
  event.type = EventType::JobFailed;
  event.job = 7;
  event.from = JobState::Running;
  event.to = JobState::Failed;
  event.nodes = 2;
  const Job job = failed_job();
  EXPECT_EQ(event_log_line(event, &job),
            "event=job.failed seq=42 job=7 user=alice name=\"big sim\" from=RUNNING to=FAILED "
            "nodes=2 exit=137 reason=\"out of memory\"");
  EXPECT_EQ(event_log_level(event), spdlog::level::warn);
}

TEST(EventLog, AJobTheEngineNoLongerKnowsStillHasItsIdAndStates) {
  Event event;
  event.seq = 3;
  event.type = EventType::JobStarted;
  event.job = 9;
  event.from = JobState::Starting;
  event.to = JobState::Running;
  event.nodes = 1;
  EXPECT_EQ(event_log_line(event, nullptr),
            "event=job.started seq=3 job=9 from=STARTING to=RUNNING nodes=1");
  EXPECT_EQ(event_log_level(event), spdlog::level::info);
}

TEST(EventLog, AnAdaptationStepHasBothSizes) {
  Event event;
  event.seq = 5;
  event.type = EventType::JobResized;
  event.job = 2;
  event.from = JobState::Adapting;
  event.to = JobState::Running;
  event.prev_nodes = 2;
  event.nodes = 4;
  EXPECT_EQ(event_log_line(event, nullptr),
            "event=job.resized seq=5 job=2 from=ADAPTING to=RUNNING prev_nodes=2 nodes=4");
}

TEST(EventLog, ANodeDownGivesItsReason) {
  Event event;
  event.seq = 8;
  event.type = EventType::NodeDown;
  event.node = "n3";
  event.message = "no heartbeat for 10 s";
  EXPECT_EQ(event_log_line(event, nullptr),
            "event=node.down seq=8 node=n3 reason=\"no heartbeat for 10 s\"");
  event.message = "drained=maintenance";
  EXPECT_EQ(event_log_line(event, nullptr),
            "event=node.down seq=8 node=n3 reason=\"drained=maintenance\"");
  EXPECT_EQ(event_log_level(event), spdlog::level::warn);
}

TEST(EventLog, APolicyErrorHasKindFileAndLine) {
  PolicyFailure failure;
  failure.code = PolicyFailureCode::Runtime;
  failure.file = "mine.lua";
  failure.line = 3;
  failure.message = "mine.lua:3: live passes fail";
  Event event = policy_error_event(failure, "pass: mine.lua:3: live passes fail");
  event.seq = 11;
  const std::string line = event_log_line(event, nullptr);
  EXPECT_EQ(line.rfind("event=policy.error seq=11 code=runtime file=mine.lua line=3 message=\"", 0),
            0u)
      << line;
  EXPECT_EQ(event_log_level(event), spdlog::level::err);
}

TEST(EventLog, AnAuthRefusalNamesTheCallerAndTheRequest) {
  Event event;
  event.seq = 12;
  event.type = EventType::AuthDenied;
  event.job = 4;  // the job the refused request was about: not the caller's
  event.user = "mallory";
  event.reason = "jobs.cancel";
  event.code = "permission_denied";
  event.message = "job 4 is alice's";
  EXPECT_EQ(event_log_line(event, nullptr),
            "event=auth.denied seq=12 user=mallory request=jobs.cancel code=permission_denied "
            "message=\"job 4 is alice's\"");
}

TEST(EventLog, PassesAreDebugAndValuesAreQuotedWhenTheyMustBe) {
  Event event;
  event.type = EventType::SchedPass;
  EXPECT_EQ(event_log_level(event), spdlog::level::debug);
  EXPECT_EQ(log_value("plain"), "plain");
  EXPECT_EQ(log_value(""), "\"\"");
  EXPECT_EQ(log_value("a=b"), "\"a=b\"");
  EXPECT_EQ(log_value("say \"hi\"\\now"), "\"say \\\"hi\\\"\\\\now\"");
  EXPECT_EQ(log_value("two\nlines"), "\"two lines\"");
}

}  // namespace
}  // namespace sched::daemon
