// The queue, nodes and acct tables, rendered from plain rows.
#include <gtest/gtest.h>

#include <sstream>

#include "listings.hpp"
#include "partition_table.hpp"
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

TEST(CliListings, AcctLongAddsWhatTheCgroupMeasuredAndTheReason) {
  AcctRow oom;
  oom.id = 21;
  oom.name = "hog";
  oom.user = "alice";
  oom.state = JobState::Failed;
  oom.exit_status = -9;
  oom.nodes = 1;
  oom.nodelist = {"n1"};
  oom.max_rss_bytes = std::uint64_t{32} << 20;
  oom.cpu_s = 75.4;
  oom.reason = "out of memory";
  AcctRow unmeasured = oom;
  unmeasured.id = 22;
  unmeasured.max_rss_bytes.reset();
  unmeasured.cpu_s.reset();
  unmeasured.reason.clear();
  const std::string out = render_acct({oom, unmeasured}, true);
  const auto lines = [&] {
    std::vector<std::string> all;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) all.push_back(line);
    return all;
  }();
  ASSERT_EQ(lines.size(), 4u) << out;
  EXPECT_TRUE(lines[0].ends_with("MaxRSS  TotalCPU  Reason")) << lines[0];
  EXPECT_TRUE(lines[2].ends_with("32768K  00:01:15  out of memory")) << lines[2];
  EXPECT_TRUE(lines[3].ends_with("   N/A       N/A  None")) << lines[3];
  // Without --long, the sacct columns alone.
  EXPECT_EQ(render_acct({oom}).find("MaxRSS"), std::string::npos);
}

TEST(CliListings, NodesIsolationShowsContainmentAndWhomJobsRunAs) {
  NodeRow root_agent{"n1", NodeState::Idle, 4, {}, "cgroup1", ""};
  NodeRow dev_agent{"n2", NodeState::Idle, 4, {}, "none", "dev"};
  NodeRow no_agent{"n3", NodeState::Down, 4, {}, "", ""};
  EXPECT_EQ(render_nodes({root_agent, dev_agent, no_agent}, true),
            "NODE  STATE  CPUS  JOBS  CONTAINMENT  RUN_AS\n"
            "n1    idle      4  -     cgroup1      users\n"
            "n2    idle      4  -     none         dev\n"
            "n3    down      4  -     -            -\n");
}

// ---- issue 20 item 1: PARTITION columns where partitions are configured,
// and `sched partition`'s table.

TEST(CliListings, PartitionColumnsWhenPartitionsAreConfigured) {
  std::vector<QueueRow> queue = some_queue();
  queue[0].partition = "batch";
  queue[1].partition = queue[2].partition = "wide";
  EXPECT_EQ(render_queue(queue, false, true),
            "JOBID  PARTITION  NAME    USER   ST     TIME  TIME_LIMIT  NODES  NODELIST(REASON)\n"
            "   12  batch      lulesh  alice  R   1:02:03     2:00:00      4  n[01-03,05]\n"
            "   13  wide       cg      bob    PD     0:00   UNLIMITED      8  (Resources)\n"
            "  140  wide       cg      bob    PD     0:00   UNLIMITED      8  (None)\n");
  EXPECT_EQ(render_queue(queue), render_queue(some_queue())) << "no column without partitions";

  std::vector<NodeRow> nodes = some_nodes();
  for (auto& row : nodes) row.partition = row.name == "gpu1" || row.name == "n06" ? "gpu" : "batch";
  EXPECT_EQ(render_nodes(nodes, false, true),
            "NODE  PARTITION  STATE  CPUS  JOBS\n"
            "n01   batch      alloc    32  12\n"
            "n02   batch      alloc    32  12\n"
            "n03   batch      idle     32  -\n"
            "n04   batch      drng     32  7,9\n"
            "n05   batch      idle     32  -\n"
            "gpu1  gpu        down     64  -\n"
            "n06   gpu        idle     32  -\n");
  EXPECT_EQ(render_node_summary(nodes, true),
            "PARTITION  STATE  NODES  NODELIST\n"
            "batch      idle       2  n[03,05]\n"
            "batch      alloc      2  n[01-02]\n"
            "batch      drng       1  n04\n"
            "gpu        idle       1  n06\n"
            "gpu        down       1  gpu1\n");
  EXPECT_EQ(render_node_summary(nodes), render_node_summary(some_nodes()));

  AcctRow done;
  done.id = 12;
  done.name = "x";
  done.user = "alice";
  done.state = JobState::Completed;
  done.partition = "wide";
  const std::string acct = render_acct({done}, false, true);
  EXPECT_EQ(acct.substr(0, acct.find('\n')).find("JobID  JobName  Partition  User"), 0u) << acct;
  EXPECT_NE(acct.find("x        wide       alice"), std::string::npos) << acct;
}

TEST(CliListings, PartitionsTable) {
  PartitionRow batch;
  batch.name = "batch";
  batch.is_default = true;
  batch.state = "up";
  batch.policy = "easy_backfill";
  batch.own_policy = true;
  batch.max_time_s = 3600;
  batch.nodes = {"n2", "n1"};
  batch.nodes_idle = 1;
  batch.pending = 3;
  batch.running = 1;
  PartitionRow wide;
  wide.name = "wide";
  wide.state = "drain";
  wide.policy = "fcfs";
  wide.max_nodes = 4;
  wide.users = {"alice"};
  wide.groups = {"hpc"};
  EXPECT_EQ(render_partitions({batch, wide}),
            "PARTITION  AVAIL  POLICY         TIMELIMIT   MAXNODES  NODES  IDLE  PENDING  RUNNING  "
            "ALLOW       NODELIST\n"
            "batch*     up     easy_backfill    1:00:00  UNLIMITED      2     1        3        1  "
            "all         n[1-2]\n"
            "wide       drain  fcfs (global)  UNLIMITED          4      0     0        0        0  "
            "alice,@hpc  -\n");
}

}  // namespace
}  // namespace sched::cli
