// schedd's metrics and web-view model (schedd/http/metrics.hpp,
// web_model.hpp) on a real engine: the figures agree with the engine's own
// (what `sched stats` answers with), adaptations are counted by kind and
// result, and the web view's state has each job's resizes.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "daemon_config.hpp"
#include "engine_fixture.hpp"
#include "event_wire.hpp"
#include "http/metrics.hpp"
#include "http/published.hpp"
#include "http/web_model.hpp"

namespace sched::daemon::http {
namespace {

// Feeds the engine's events to the metrics and the model, as schedd does.
class Feed : public EventSink {
 public:
  explicit Feed(const Engine& engine) : engine_(engine) {}
  void on_event(const Event& event) override {
    const Job* job = engine_.find_job(event.job);
    metrics.on_event(event, partition_label(job, engine_.partitioned()));
    model.on_event(event, engine_.find_job(event.job));
  }
  Metrics metrics;
  WebModel model;

 private:
  const Engine& engine_;
};

// The value of the one line of `text` that starts with `series` (name and
// labels as written); NaN when there is none.
double value_of(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  std::size_t at = 0;
  while ((at = text.find(prefix, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      return std::stod(text.substr(at + prefix.size(), text.find('\n', at) - at));
    }
    ++at;
  }
  return std::nan("");
}

class HttpMetrics : public test::EngineFixture {
 protected:
  void SetUp() override {
    init(4);
    feed = std::make_unique<Feed>(*engine);
    engine->add_sink(feed.get());
  }
  std::string render(std::uint64_t submitted = 0) {
    DaemonFigures figures;
    figures.submitted = submitted;
    figures.uptime_s = 12.5;
    return feed->metrics.render(*engine, figures);
  }
  std::unique_ptr<Feed> feed;
};

TEST_F(HttpMetrics, JobsQueueAndNodesAgreeWithTheEngine) {
  const JobId running = run_job(test::rigid_spec(2));
  submit(test::rigid_spec(4));
  submit(test::rigid_spec(1));
  (void)engine->set_node_draining("n3", true, "maintenance");
  (void)engine->set_node_up("n2", false, "no heartbeat");
  const std::string text = render(7);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"pending\",partition=\"default\"}"),
            static_cast<double>(engine->pending_queue().listing_size()));
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"pending\",partition=\"default\"}"), 2);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"running\",partition=\"default\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"adapting\",partition=\"default\"}"), 0);
  EXPECT_EQ(value_of(text, "sched_queue_length{partition=\"default\"}"), 2);
  EXPECT_EQ(value_of(text, "sched_jobs_submitted_total"), 7);
  EXPECT_EQ(value_of(text, "sched_uptime_seconds"), 12.5);
  // n0, n1 run the job; n2 is down; n3 drained (idle).
  EXPECT_EQ(value_of(text, "sched_nodes{state=\"allocated\"}"), 2);
  EXPECT_EQ(value_of(text, "sched_nodes{state=\"down\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_nodes{state=\"drained\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_nodes{state=\"idle\"}"), 0);

  engine->job_ended(running, 0);
  const std::string after = render(7);
  EXPECT_EQ(value_of(after, "sched_jobs{state=\"running\",partition=\"default\"}"), 0);
  EXPECT_EQ(value_of(after, "sched_jobs_ended_total{state=\"completed\",partition=\"default\"}"),
            1);
}

TEST_F(HttpMetrics, WithPartitionsEachJobCountsInItsOwn) {
  PartitionSpec batch;
  batch.name = "batch";
  batch.nodes = {"n0", "n1"};
  batch.is_default = true;
  PartitionSpec gpu;
  gpu.name = "gpu";
  gpu.nodes = {"n2", "n3"};
  ASSERT_TRUE(engine->set_partitions({batch, gpu}).ok());
  JobSpec on_gpu = test::rigid_spec(2);
  on_gpu.partition = "gpu";
  const JobId running = submit(on_gpu);
  in_pass([running](PassContext& ctx) {
    if (ctx.partition_name() == "gpu") {
      EXPECT_EQ(ctx.start(running), std::nullopt);
    }
  });
  engine->job_started(running);
  submit(on_gpu);               // waits for gpu's two nodes
  submit(test::rigid_spec(1));  // batch, the default
  submit(test::rigid_spec(2));  // batch
  std::string text = render();
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"pending\",partition=\"gpu\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"running\",partition=\"gpu\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"pending\",partition=\"batch\"}"), 2);
  EXPECT_EQ(value_of(text, "sched_jobs{state=\"running\",partition=\"batch\"}"), 0);
  EXPECT_EQ(value_of(text, "sched_queue_length{partition=\"batch\"}"), 2);
  EXPECT_TRUE(std::isnan(value_of(text, "sched_queue_length{partition=\"default\"}"))) << text;
  engine->job_ended(running, 0);
  text = render();
  EXPECT_EQ(value_of(text, "sched_jobs_ended_total{state=\"completed\",partition=\"gpu\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_jobs_ended_total{state=\"completed\",partition=\"batch\"}"), 0);
}

TEST_F(HttpMetrics, PassesRefusalsAndTheirHistogramComeFromThePasses) {
  run_job(test::rigid_spec(2));
  const JobId id = submit(test::rigid_spec(3));  // more than the 2 idle nodes
  in_pass([id](PassContext& ctx) { (void)ctx.start(id); });
  in_pass([](PassContext&) {});
  const std::string text = render();
  const PassStats& stats = engine->stats();
  EXPECT_EQ(value_of(text, "sched_passes_total"), static_cast<double>(stats.passes));
  EXPECT_EQ(value_of(text, "sched_pass_duration_seconds_count"), static_cast<double>(stats.passes));
  EXPECT_EQ(value_of(text, "sched_pass_duration_seconds_bucket{le=\"+Inf\"}"),
            static_cast<double>(stats.passes));
  EXPECT_NEAR(value_of(text, "sched_pass_duration_seconds_sum"), stats.total_s, 1e-9);
  EXPECT_EQ(value_of(text, "sched_refusals_total{code=\"over_allocation\"}"),
            static_cast<double>(
                stats.refusals_by_code[static_cast<std::size_t>(RefusalCode::OverAllocation)]));
  EXPECT_GE(stats.refusals, 1U);
  double sum = 0;
  for (int code = 0; code < kRefusalCodeCount; ++code) {
    sum += value_of(text, "sched_refusals_total{code=\"" +
                              std::string(to_string(static_cast<RefusalCode>(code))) + "\"}");
  }
  EXPECT_EQ(sum, static_cast<double>(stats.refusals));
}

TEST_F(HttpMetrics, AdaptationsAreCountedByKindAndResultWithTheirDuration) {
  const JobId id = run_job(test::malleable_spec(1, 1, 4));
  clock.set(100);
  in_pass([id](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 3), std::nullopt); });
  EXPECT_EQ(value_of(render(), "sched_adaptations_in_progress"), 1);
  EXPECT_EQ(value_of(render(), "sched_jobs{state=\"adapting\",partition=\"default\"}"), 1);
  clock.set(102.5);
  engine->adaptation_done(id, true);
  clock.set(110);
  in_pass([id](PassContext& ctx) { EXPECT_EQ(ctx.shrink(id, 2), std::nullopt); });
  clock.set(111);
  engine->adaptation_done(id, false);
  const std::string text = render();
  EXPECT_EQ(value_of(text, "sched_adaptations_total{kind=\"expand\",result=\"ok\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_adaptations_total{kind=\"shrink\",result=\"rolled_back\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_adaptations_total{kind=\"shrink\",result=\"ok\"}"), 0);
  EXPECT_EQ(value_of(text, "sched_adaptation_duration_seconds_sum{kind=\"expand\"}"), 2.5);
  EXPECT_EQ(value_of(text, "sched_adaptation_duration_seconds_bucket{kind=\"expand\",le=\"2.5\"}"),
            1);
  EXPECT_EQ(value_of(text, "sched_adaptation_duration_seconds_bucket{kind=\"expand\",le=\"1\"}"),
            0);
  EXPECT_EQ(value_of(text, "sched_adaptation_duration_seconds_sum{kind=\"shrink\"}"), 1);
  EXPECT_EQ(value_of(text, "sched_adaptations_in_progress"), 0);

  // The web view's model has the job's start and its resize, not the rollback.
  const auto state = nlohmann::json::parse(feed->model.state_json(*engine, 0, 111));
  ASSERT_EQ(state["running"].size(), 1U);
  const auto& job = state["running"][0];
  EXPECT_EQ(job["id"], id);
  EXPECT_EQ(job["size"], 3);
  ASSERT_EQ(job["segments"].size(), 2U);
  EXPECT_EQ(job["segments"][0]["n"], 1);
  EXPECT_EQ(job["segments"][1]["n"], 3);
  EXPECT_EQ(job["segments"][1]["t"], 102.5);
  EXPECT_EQ(job["nodes"].size(), 3U);

  clock.set(120);
  engine->job_ended(id, 1);
  const auto ended = nlohmann::json::parse(feed->model.state_json(*engine, 0, 120));
  EXPECT_TRUE(ended["running"].empty());
  ASSERT_EQ(ended["recent"].size(), 1U);
  EXPECT_EQ(ended["recent"][0]["state"], "FAILED");
  EXPECT_EQ(ended["recent"][0]["end"], 120);
  EXPECT_EQ(ended["recent"][0]["segments"].size(), 2U);
  EXPECT_GT(feed->model.last_seq(), 0U);
  EXPECT_EQ(ended["seq"], feed->model.last_seq());
}

TEST_F(HttpMetrics, TheCorridorIsWrittenOnlyWhenOneIsSet) {
  EXPECT_EQ(render().find("sched_power_corridor"), std::string::npos);
  engine->set_corridor(100, 900);
  const std::string text = render();
  EXPECT_EQ(value_of(text, "sched_power_corridor_lower_watts"), 100);
  EXPECT_EQ(value_of(text, "sched_power_corridor_upper_watts"), 900);
  EXPECT_EQ(value_of(text, "sched_power_watts"), engine->power().current_w);
}

TEST_F(HttpMetrics, TheStateListsNodesQueueAndPower) {
  run_job(test::rigid_spec(1));
  const JobId waiting = submit(test::rigid_spec(3));
  feed->model.sample_power(*engine, 5);
  const auto state = nlohmann::json::parse(feed->model.state_json(*engine, 2, 5));
  ASSERT_EQ(state["nodes"].size(), 4U);
  EXPECT_EQ(state["nodes"][0]["state"], "allocated");
  EXPECT_EQ(state["nodes"][1]["state"], "idle");
  EXPECT_EQ(state["queue"]["total"], 1);
  EXPECT_EQ(state["queue"]["jobs"][0]["id"], waiting);
  EXPECT_EQ(state["queue"]["jobs"][0]["nodes"], 3);
  EXPECT_EQ(state["power"]["history"].size(), 1U);
  EXPECT_EQ(state["submitted"], 2);
  EXPECT_EQ(state["seq"], feed->model.last_seq());
  const auto event = nlohmann::json::parse(WebModel::event_json(
      events.of_type(EventType::JobSubmitted).back(), engine->find_job(waiting)));
  EXPECT_EQ(event["topic"], "job.submitted");
  EXPECT_EQ(event["job"], waiting);
  EXPECT_EQ(event["name"], "rigid3");
}

TEST(HttpPublished, EventsAfterASeqAreGivenAndOnesGoneAskForAReload) {
  Published published;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) published.add_event(seq, "{}");
  auto after = published.events_after(1, 0);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->size(), 2U);
  EXPECT_EQ(after->front().first, 2U);
  after = published.events_after(3, 10);  // nothing new: empty after the wait
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->empty());
  for (std::uint64_t seq = 4; seq <= Published::kRing + 10; ++seq) published.add_event(seq, "{}");
  EXPECT_FALSE(published.events_after(3, 0));  // 4.. have left the ring
  after = published.events_after(Published::kRing + 5, 0);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->size(), 5U);
  published.close();
  EXPECT_FALSE(published.events_after(Published::kRing + 10, 10000));  // at once
  EXPECT_TRUE(published.closed());
}

TEST(HttpConfig, ListenIsHostColonPort) {
  EXPECT_FALSE(http_listen_problem(""));
  EXPECT_FALSE(http_listen_problem("127.0.0.1:9180"));
  EXPECT_FALSE(http_listen_problem("127.0.0.1:0"));
  EXPECT_FALSE(http_listen_problem("[::1]:9180"));
  EXPECT_TRUE(http_listen_problem("127.0.0.1"));
  EXPECT_TRUE(http_listen_problem(":9180"));
  EXPECT_TRUE(http_listen_problem("127.0.0.1:65536"));
  EXPECT_TRUE(http_listen_problem("127.0.0.1:http"));
  EXPECT_NE(http_listen_problem("localhost")->find("HOST:PORT"), std::string::npos);
}

}  // namespace
}  // namespace sched::daemon::http
