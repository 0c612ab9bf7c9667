// schedd's Prometheus endpoint on a local cluster (docs/metrics.md): scraped
// over HTTP after jobs were submitted, its figures agree with `sched stats`
// and `sched queue`; the server is read-only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cluster.hpp"
#include "http_get.hpp"

namespace sched::testing {
namespace {

ClusterOptions with_http(int port) {
  ClusterOptions options;
  options.extra_config = "\n[http]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n";
  return options;
}

nlohmann::json stats_json(LocalCluster& cluster) {
  const CliRun run = run_sched(cluster, {"stats", "--json"});
  EXPECT_EQ(run.status, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

TEST(Metrics, AScrapeAgreesWithStatsAndQueue) {
  const int port = free_port();
  LocalCluster cluster(with_http(port));
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();

  // FCFS: the first runs on one node, the third needs two and blocks the
  // fourth behind it.
  const auto running = cluster.submit("#!/bin/sh\nsleep 30\n", 1, 0, "long");
  ASSERT_TRUE(cluster.wait_state(running, "RUNNING")) << cluster.logs();
  const auto quick = cluster.submit("#!/bin/sh\ntrue\n", 1, 0, "quick");
  ASSERT_TRUE(cluster.wait_state(quick, "COMPLETED")) << cluster.logs();
  cluster.submit("#!/bin/sh\ntrue\n", 2, 0, "wide");
  cluster.submit("#!/bin/sh\ntrue\n", 1, 0, "behind");

  // The snapshot follows schedd's loop within a fraction of a second.
  nlohmann::json stats;
  std::string text;
  const bool agreed = eventually([&] {
    stats = stats_json(cluster);
    const HttpReply reply = http_get(port, "/metrics");
    text = reply.body;
    return reply.status == 200 &&
           metric_value(text, "sched_jobs_submitted_total") == stats["jobs_submitted"] &&
           metric_value(text, "sched_jobs{state=\"pending\",partition=\"default\"}") ==
               stats["pending"];
  });
  ASSERT_TRUE(agreed) << text << "\n" << stats.dump() << cluster.logs();
  EXPECT_EQ(stats["jobs_submitted"], 4);
  EXPECT_EQ(stats["pending"], 2);
  EXPECT_EQ(stats["running"], 1);
  EXPECT_EQ(metric_value(text, "sched_queue_length{partition=\"default\"}"), 2);
  double active = 0;
  for (const char* state : {"starting", "running", "adapting", "completing"}) {
    const double n = metric_value(
        text, std::string("sched_jobs{state=\"") + state + "\",partition=\"default\"}");
    ASSERT_GE(n, 0) << state << "\n" << text;
    active += n;
  }
  EXPECT_EQ(active, stats["running"]);
  EXPECT_EQ(metric_value(text, "sched_jobs{state=\"running\",partition=\"default\"}"), 1);
  EXPECT_EQ(metric_value(text, "sched_jobs_ended_total{state=\"completed\",partition=\"default\"}"),
            1);
  EXPECT_EQ(metric_value(text, "sched_nodes{state=\"allocated\"}"), 1);
  EXPECT_EQ(metric_value(text, "sched_nodes{state=\"idle\"}"), 1);
  EXPECT_EQ(metric_value(text, "sched_nodes{state=\"down\"}"), 0);
  EXPECT_EQ(stats["nodes"], 2);
  EXPECT_EQ(stats["nodes_up"], 2);
  EXPECT_GE(stats["passes"].get<double>(), 1);
  EXPECT_EQ(metric_value(text, "sched_pass_duration_seconds_count"),
            metric_value(text, "sched_passes_total"));
  // Counters only grow, and the snapshot is at most a fraction of a second
  // behind schedd's loop (up to 0.2 s: docs/metrics.md): a scrape soon
  // reaches what `sched stats` said.
  for (const auto& [metric, key] :
       {std::pair{"sched_passes_total", "passes"}, std::pair{"sched_messages_total", "messages"},
        std::pair{"sched_actions_total", "actions"}}) {
    EXPECT_TRUE(eventually([&] {
      return metric_value(http_get(port, "/metrics").body, metric) >= stats[key].get<double>();
    })) << metric;
  }
  EXPECT_EQ(metric_value(text, "sched_refusals_total{code=\"placement\"}"), 0);
  EXPECT_GE(metric_value(text, "sched_power_watts"), 0);
  EXPECT_EQ(text.find("sched_power_corridor"), std::string::npos);  // none set
  for (const char* family :
       {"# TYPE sched_jobs gauge", "# TYPE sched_jobs_submitted_total counter",
        "# TYPE sched_pass_duration_seconds histogram", "# TYPE sched_refusals_total counter",
        "# TYPE sched_adaptations_total counter",
        "# TYPE sched_adaptation_duration_seconds histogram", "# TYPE sched_nodes gauge",
        "# TYPE sched_power_watts gauge", "# TYPE sched_queue_length gauge"}) {
    EXPECT_NE(text.find(family), std::string::npos) << family;
  }

  // `sched queue` lists the same pending jobs.
  const CliRun queue = run_sched(cluster, {"queue", "-t", "PD", "--json"});
  ASSERT_EQ(queue.status, 0) << queue.err;
  EXPECT_EQ(nlohmann::json::parse(queue.out)["jobs"].size(), 2U);

  // A corridor set at run time shows with its bounds.
  ASSERT_EQ(run_sched(cluster, {"corridor", "set", "100", "900"}).status, 0);
  EXPECT_TRUE(eventually([&] {
    text = http_get(port, "/metrics").body;
    return metric_value(text, "sched_power_corridor_upper_watts") == 900;
  })) << text;
  EXPECT_EQ(metric_value(text, "sched_power_corridor_lower_watts"), 100);
}

TEST(Metrics, TheServerIsReadOnlyAndServesTheWebViewAndState) {
  const int port = free_port();
  LocalCluster cluster(with_http(port));
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit("#!/bin/sh\nsleep 30\n", 1, 0, "watched");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();

  const HttpReply metrics = http_get(port, "/metrics");
  EXPECT_EQ(metrics.status, 200) << metrics.error;
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(http_request(port, "POST", "/metrics", "x=1").status, 405);
  EXPECT_EQ(http_request(port, "PUT", "/api/state", "{}").status, 405);
  EXPECT_EQ(http_get(port, "/etc/passwd").status, 404);
  const HttpReply page = http_get(port, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("sched · cluster view"), std::string::npos);

  nlohmann::json state;
  ASSERT_TRUE(eventually([&] {
    state = nlohmann::json::parse(http_get(port, "/api/state").body);
    return state["running"].size() == 1;
  })) << state.dump();
  EXPECT_EQ(state["running"][0]["id"], id);
  EXPECT_EQ(state["running"][0]["name"], "watched");
  EXPECT_EQ(state["running"][0]["nodes"], nlohmann::json::array({"n1"}));
  EXPECT_EQ(state["nodes"][0]["job"], id);
  EXPECT_GT(state["seq"].get<std::uint64_t>(), 0U);
}

}  // namespace
}  // namespace sched::testing
