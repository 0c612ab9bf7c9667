// The queue, nodes and acct tables, rendered from plain rows.
#include <gtest/gtest.h>

#include "listings.hpp"
#include "test_cli_support.hpp"

namespace sched::cli {
namespace {

std::vector<QueueRow> some_queue() {
  QueueRow running;
  running.id = 12;
  running.name = "lulesh";
  running.user = "alice";
  running.state = JobState::Running;
  running.elapsed = 3723;
  running.limit = 7200;
  running.nodes = 4;
  running.nodelist = {"n01", "n02", "n03", "n05"};
  QueueRow pending;
  pending.id = 13;
  pending.name = "cg";
  pending.user = "bob";
  pending.limit = 0;
  pending.nodes = 8;
  pending.reason = "Resources";
  pending.expected_start = 1795316645;
  QueueRow unexplained = pending;
  unexplained.id = 140;
  unexplained.reason.clear();
  unexplained.expected_start = -1;
  return {running, pending, unexplained};
}

TEST(CliListings, QueueLikeSqueue) {
  EXPECT_EQ(render_queue(some_queue()),
            "JOBID  NAME    USER   ST     TIME  TIME_LIMIT  NODES  NODELIST(REASON)\n"
            "   12  lulesh  alice  R   1:02:03     2:00:00      4  n[01-03,05]\n"
            "   13  cg      bob    PD     0:00   UNLIMITED      8  (Resources)\n"
            "  140  cg      bob    PD     0:00   UNLIMITED      8  (None)\n");
}

TEST(CliListings, QueueWithExpectedStart) {
  testing::ScopedTimeZone utc("UTC0");
  EXPECT_EQ(render_queue(some_queue(), true),
            "JOBID  NAME    USER   ST     TIME  TIME_LIMIT  START_TIME           NODES  "
            "NODELIST(REASON)\n"
            "   12  lulesh  alice  R   1:02:03     2:00:00  N/A                      4  "
            "n[01-03,05]\n"
            "   13  cg      bob    PD     0:00   UNLIMITED  2026-11-22T03:04:05      8  "
            "(Resources)\n"
            "  140  cg      bob    PD     0:00   UNLIMITED  N/A                      8  (None)\n");
}

TEST(CliListings, EmptyQueueIsItsHeader) {
  EXPECT_EQ(render_queue({}), "JOBID  NAME  USER  ST  TIME  TIME_LIMIT  NODES  NODELIST(REASON)\n");
}

std::vector<NodeRow> some_nodes() {
  return {{"n01", NodeState::Allocated, 32, {12}}, {"n02", NodeState::Allocated, 32, {12}},
          {"n03", NodeState::Idle, 32, {}},        {"n04", NodeState::Draining, 32, {7, 9}},
          {"n05", NodeState::Idle, 32, {}},        {"gpu1", NodeState::Down, 64, {}},
          {"n06", NodeState::Idle, 32, {}}};
}

TEST(CliListings, NodesOneLineEach) {
  EXPECT_EQ(render_nodes(some_nodes()),
            "NODE  STATE  CPUS  JOBS\n"
            "n01   alloc    32  12\n"
            "n02   alloc    32  12\n"
            "n03   idle     32  -\n"
            "n04   drng     32  7,9\n"
            "n05   idle     32  -\n"
            "gpu1  down     64  -\n"
            "n06   idle     32  -\n");
}

TEST(CliListings, NodeSummaryGroupsByState) {
  EXPECT_EQ(render_node_summary(some_nodes()),
            "STATE  NODES  NODELIST\n"
            "idle       3  n[03,05-06]\n"
            "alloc      2  n[01-02]\n"
            "drng       1  n04\n"
            "down       1  gpu1\n");
}

TEST(CliListings, AcctLikeSacct) {
  testing::ScopedTimeZone utc("UTC0");
  AcctRow done;
  done.id = 12;
  done.name = "lulesh";
  done.user = "alice";
  done.state = JobState::Completed;
  done.elapsed = 3723;
  done.nodes = 4;
  done.nodelist = {"n01", "n02", "n03", "n04"};
  done.start = 1795316645;
  done.end = 1795316645 + 3723;
  AcctRow killed = done;
  killed.id = 13;
  killed.state = JobState::Failed;
  killed.exit_status = -9;
  AcctRow never;
  never.id = 14;
  never.name = "cg";
  never.user = "bob";
  never.state = JobState::Cancelled;
  never.nodes = 2;
  EXPECT_EQ(render_acct({done, killed, never}),
            "JobID  JobName  User   State      ExitCode   Elapsed  NNodes  NodeList       "
            "Start                End\n"
            "-----  -------  -----  ---------  --------  --------  ------  -------------  "
            "-------------------  -------------------\n"
            "12     lulesh   alice  COMPLETED       0:0  01:02:03       4  n[01-04]       "
            "2026-11-22T03:04:05  2026-11-22T04:06:08\n"
            "13     lulesh   alice  FAILED          0:9  01:02:03       4  n[01-04]       "
            "2026-11-22T03:04:05  2026-11-22T04:06:08\n"
            "14     cg       bob    CANCELLED       0:0  00:00:00       2  None assigned  "
            "N/A                  N/A\n");
}

}  // namespace
}  // namespace sched::cli
