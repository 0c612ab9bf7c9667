// Events complete and replayable (issue 19 item 3, docs/protocol.md §9): a
// subscriber away for 100 events comes back with `sched events --since SEQ`
// and gets every event it missed, then the live ones, none missing and none
// twice, while events keep happening; job events carry name, user,
// partition and exit code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "sched/auth/credential.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

std::uint64_t journal_last_seq(LocalCluster& cluster) {
  proto::EventsReplayRequest request;
  request.since = 0;
  request.limit = 1;
  return cluster.client()
      .call<proto::EventsReplayReply>(proto::type::kEventsReplay, request)
      .last_seq;
}

std::vector<nlohmann::json> read_events(Process& process, std::size_t n) {
  std::vector<nlohmann::json> events;
  while (events.size() < n) {
    const auto line = process.read_line(15s);
    if (!line) break;
    events.push_back(nlohmann::json::parse(*line));
  }
  return events;
}

TEST(EventReplay, ASubscriberAwayFor100EventsCatchesUpWithNoneMissingAndNoneRepeated) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const std::string script = "#!/bin/sh\ntrue\n";
  const auto first_job = cluster.submit(script, 1, 0, "first");
  ASSERT_TRUE(cluster.wait_state(first_job, "COMPLETED")) << cluster.logs();

  // A subscriber reads what there is, then goes away.
  TempDir dir("sched-replay");
  std::uint64_t seen = 0;
  {
    Process first({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events", "--since", "0",
                   "--count", "5"},
                  dir.str() + "/first.err");
    const auto events = read_events(first, 5);
    ASSERT_EQ(events.size(), 5u) << cluster.logs();
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["seq"], i + 1);
    seen = events.back()["seq"];
  }

  // While it is away, at least 100 events happen.
  std::vector<std::int64_t> jobs;
  while (journal_last_seq(cluster) < seen + 100) {
    jobs.push_back(cluster.submit(script, 1, 0, "away"));
    ASSERT_TRUE(cluster.wait_state(jobs.back(), "COMPLETED")) << cluster.logs();
  }
  const std::uint64_t missed = journal_last_seq(cluster) - seen;
  ASSERT_GE(missed, 100u);

  // It comes back while more happen: the missed ones, then 30 live ones.
  Process second({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events", "--since",
                  std::to_string(seen), "--count", std::to_string(missed + 30)},
                 dir.str() + "/second.err");
  std::thread more([&] {
    for (int i = 0; i < 8; ++i) {
      const auto id = cluster.submit(script, 1, 0, "live");
      cluster.wait_state(id, "COMPLETED");
    }
  });
  const auto events = read_events(second, missed + 30);
  more.join();
  ASSERT_EQ(events.size(), missed + 30) << cluster.logs();
  for (std::size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(events[i]["seq"], seen + 1 + i) << "event " << i << ": " << events[i];
  }

  // Job events as replayed carry their job's name, user, partition and end.
  const std::string me = auth::user_name(::geteuid());
  bool completed = false;
  for (const auto& event : events) {
    const std::string topic = event["topic"];
    if (topic.rfind("job.", 0) != 0) continue;
    EXPECT_EQ(event.value("user", ""), me) << event;
    EXPECT_EQ(event.value("partition", ""), "default") << event;
    const std::string name = event.value("name", "");
    EXPECT_TRUE(name == "first" || name == "away" || name == "live") << event;
    if (topic == "job.completed") {
      completed = true;
      EXPECT_EQ(event.value("exit_code", -1), 0) << event;
    }
  }
  EXPECT_TRUE(completed);
}

TEST(EventReplay, AFailedJobsEventHasItsExitCodeAndANodesDrainItsReason) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit("#!/bin/sh\nexit 4\n", 1, 0, "four");
  ASSERT_TRUE(cluster.wait_state(id, "FAILED")) << cluster.logs();
  ASSERT_EQ(run_sched(cluster, {"nodes", "drain", "n1", "--reason", "fan broken"}).status, 0);

  proto::EventsReplayRequest request;
  const auto reply =
      cluster.client().call<proto::EventsReplayReply>(proto::type::kEventsReplay, request);
  bool failed = false;
  bool drained = false;
  for (const auto& event : reply.events) {
    if (event.topic == "job.failed") {
      failed = true;
      EXPECT_EQ(event.exit_code.value_or(-1), 4);
      EXPECT_EQ(event.name.value_or(""), "four");
    }
    if (event.topic == "node.drain") {
      drained = true;
      EXPECT_EQ(event.reason.value_or(""), "fan broken");
    }
  }
  EXPECT_TRUE(failed);
  EXPECT_TRUE(drained);
  EXPECT_EQ(reply.last_seq, reply.events.back().seq);
}

}  // namespace
}  // namespace sched::testing
