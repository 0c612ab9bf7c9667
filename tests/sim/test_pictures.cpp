// The simulator's pictures (sim/pictures.hpp): the series they plot, worked
// out by hand, and the SVG files holding what the run did.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/pictures.hpp"
#include "sched/sim/simulator.hpp"

namespace sched::sim {
namespace {

namespace fs = std::filesystem;

JobRecord record(JobId id, double submit, double start, double end, int nodes,
                 JobKind kind = JobKind::Rigid, double node_seconds = -1) {
  JobRecord r;
  r.id = id;
  r.submit = submit;
  r.start = start;
  r.end = end;
  r.nodes = nodes;
  r.kind = kind;
  r.state = end >= 0 ? JobState::Completed : (start >= 0 ? JobState::Running : JobState::Pending);
  r.node_seconds = node_seconds >= 0 ? node_seconds : (end > start ? nodes * (end - start) : 0);
  return r;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The area under a step series up to its last point.
double integral(const StepSeries& series) {
  double sum = 0;
  for (std::size_t i = 0; i + 1 < series.size(); ++i)
    sum += series[i].second * (series[i + 1].first - series[i].first);
  return sum;
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("sched_pictures_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(SimPictures, QueueLengthCountsSubmittedJobsNotYetStarted) {
  const std::vector<JobRecord> jobs = {
      record(1, 0, 0, 10, 1),    // starts at once: never counted at 0
      record(2, 0, 10, 20, 1),   // waits 0..10
      record(3, 5, 20, 30, 1),   // waits 5..20
      record(4, 6, -1, -1, 1),   // never started: waits to the end
      record(5, 7, -1, 12, 1)};  // cancelled while waiting at 12
  const StepSeries expected = {{0, 1}, {5, 2}, {6, 3}, {7, 4}, {10, 3}, {12, 2}, {20, 1}, {40, 1}};
  EXPECT_EQ(queue_length_series(jobs, 40), expected);
}

TEST(SimPictures, BusyNodesFollowStartsResizesAndEnds) {
  std::vector<JobRecord> jobs = {record(1, 0, 0, 10, 2),
                                 // Malleable, asked for 3, started on 2 and grown to 4 at 15.
                                 record(2, 0, 10, 20, 3, JobKind::Malleable, 2 * 5 + 4 * 5),
                                 // Moldable, asked for 4, started on 2 (its node time says so).
                                 record(3, 0, 20, 30, 4, JobKind::Moldable, 2 * 10),
                                 record(4, 0, 25, -1, 1)};  // still running at the end
  jobs[3].node_seconds = 15;
  const std::vector<ResizeRecord> resizes = {{2, 15, 2, 4}};
  const StepSeries busy = busy_nodes_series(jobs, resizes, 40);
  const StepSeries expected = {{0, 2}, {10, 2}, {15, 4}, {20, 2}, {25, 3}, {30, 1}, {40, 0}};
  EXPECT_EQ(busy, expected);
  double node_seconds = 0;
  for (const auto& job : jobs) node_seconds += job.node_seconds;
  EXPECT_DOUBLE_EQ(integral(busy), node_seconds);
}

// Thousands of jobs at scattered times (fractions, negatives, large
// values, ties, neighbouring doubles): both series agree with a count at each of their times.
TEST(SimPictures, ALargeRunsSeriesAreCountsAtEachChange) {
  std::mt19937_64 random(15);
  std::uniform_real_distribution<double> uniform(-500, 5000);
  const auto time = [&] {
    switch (random() % 5) {
      case 4:  // a few thousand doubles apart: the lowest bits order them
        return 1000.0 + static_cast<double>(random() % 4096) * 0x1p-43;  // k ulps up
      case 0:
        return std::round(uniform(random));  // whole seconds, many ties
      case 1:
        return uniform(random);
      case 2:
        return 1e9 + uniform(random);
      default:
        return std::round(uniform(random)) / 8;
    }
  };
  std::vector<JobRecord> jobs;
  for (JobId id = 1; id <= 3000; ++id) {
    const double submit = time();
    const double start = random() % 10 == 0 ? -1 : std::max(0.0, submit + std::fabs(time()));
    const double end = start >= 0 && random() % 10 != 0 ? start + std::fabs(time()) : -1;
    jobs.push_back(record(id, submit, start, end, 1 + static_cast<int>(random() % 64)));
    jobs.back().start_nodes = jobs.back().nodes;
  }
  const double end_time = 1e10;  // after every change

  // Every job waits from its submit until its start, else its end, else forever;
  // it holds its nodes from its start until its end, else end_time.
  const auto waiting_at = [&](double t) {
    double n = 0;
    for (const JobRecord& job : jobs) {
      const double until = job.start >= 0 ? job.start : (job.end >= 0 ? job.end : INFINITY);
      n += job.submit <= t && t < until;
    }
    return n;
  };
  const auto busy_at = [&](double t) {
    double n = 0;
    for (const JobRecord& job : jobs) {
      const double until = job.end >= 0 ? job.end : end_time;
      if (job.start >= 0 && job.start <= t && t < until) n += job.nodes;
    }
    return n;
  };
  const auto check = [&](const StepSeries& series, const std::function<double(double)>& at) {
    ASSERT_GT(series.size(), 1000u);
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (i > 0) {
        ASSERT_LT(series[i - 1].first, series[i].first);
      }
      ASSERT_EQ(series[i].second, at(series[i].first)) << "at " << series[i].first;
    }
    EXPECT_EQ(series.back().first, end_time);
  };
  check(queue_length_series(jobs, end_time), waiting_at);
  check(busy_nodes_series(jobs, {}, end_time), busy_at);
}

TEST(SimPictures, StartNodesPreferTheFirstResizeThenTheNodeTime) {
  const ResizeRecord grow{7, 3, 2, 6};
  EXPECT_EQ(start_nodes(record(7, 0, 0, 10, 5), &grow), 2);
  EXPECT_EQ(start_nodes(record(7, 0, 0, 10, 5, JobKind::Moldable, 30), nullptr), 3);
  EXPECT_EQ(start_nodes(record(7, 0, 0, -1, 5), nullptr), 5);  // not ended: as recorded
}

SimResult hand_made_result() {
  SimResult result;
  result.policy = "hand";
  result.jobs = {record(1, 0, 0, 100, 2),
                 record(2, 0, 10, 80, 3, JobKind::Malleable, 2 * 30 + 4 * 40),
                 record(3, 5, 100, 150, 4), record(4, 6, 120, 160, 1, JobKind::Evolving),
                 record(5, 7, -1, -1, 8)};
  result.resizes = {{2, 40, 2, 4}};
  result.end_time = 160;
  result.metrics = compute_metrics(result.jobs, 8, 0);
  return result;
}

TEST(SimPictures, WritesGanttUtilisationAndQueueWithOneBarPerStartedJob) {
  TempDir dir;
  const SimResult result = hand_made_result();
  const auto written = write_pictures(dir.path().string(), result);
  ASSERT_EQ(written.size(), 3u) << "no power modelled: no power.svg";
  EXPECT_FALSE(fs::exists(dir.path() / "power.svg"));

  const std::string gantt = read_text(dir.path() / "gantt.svg");
  EXPECT_EQ(count(gantt, "<g class=\"bar\""), 4u);  // job 5 never started
  // Job 2's bar: 2 nodes, then 4 from its resize.
  EXPECT_NE(gantt.find("<title>job 2 (malleable): 2→4 nodes, 10–80 s</title>"), std::string::npos);
  EXPECT_NE(gantt.find(">rigid job</text>"), std::string::npos);
  EXPECT_NE(gantt.find(">malleable job</text>"), std::string::npos);
  EXPECT_NE(gantt.find(">evolving job</text>"), std::string::npos);
  EXPECT_NE(gantt.find(">time (s)</text>"), std::string::npos);
  EXPECT_NE(gantt.find("a full lane: 4 nodes"), std::string::npos);

  const std::string queue = read_text(dir.path() / "queue.svg");
  EXPECT_NE(queue.find(">waiting jobs (max 4)</text>"), std::string::npos);
  EXPECT_NE(queue.find(">waiting jobs</text>"), std::string::npos);  // the y axis

  const std::string utilisation = read_text(dir.path() / "utilisation.svg");
  EXPECT_NE(utilisation.find(">nodes allocated to jobs (% of 8)</text>"), std::string::npos);
  EXPECT_NE(utilisation.find(">utilisation (%)</text>"), std::string::npos);
  EXPECT_NE(utilisation.find("(metrics.json): "), std::string::npos);
}

TEST(SimPictures, PowerWithACorridorIsDrawnWithItsBand) {
  TempDir dir;
  SimResult result = hand_made_result();
  result.power = {{0, 1000, 0, 0}, {30, 1500, 1200, 1800}, {90, 900, 1000, 1700}};
  const auto written = write_pictures(dir.path().string(), result);
  ASSERT_EQ(written.size(), 4u);
  const std::string power = read_text(dir.path() / "power.svg");
  EXPECT_EQ(count(power, "class=\"band\""), 2u);  // the two corridors; none before 30
  EXPECT_NE(power.find(">power corridor [lower, upper]</text>"), std::string::npos);
  EXPECT_NE(power.find(">cluster power</text>"), std::string::npos);
  EXPECT_NE(power.find(">power (W)</text>"), std::string::npos);
}

TEST(SimPictures, PowerIsWorthAPictureWhenItChangesOrHasACorridor) {
  EXPECT_FALSE(power_modelled({}));
  EXPECT_FALSE(power_modelled({{0, 2272, 0, 0}}));  // 32 idle nodes, nothing else
  EXPECT_FALSE(power_modelled({{0, 2272, 0, 0}, {10, 2272, 0, 0}}));
  EXPECT_TRUE(power_modelled({{0, 2272, 0, 0}, {10, 3000, 0, 0}}));
  EXPECT_TRUE(power_modelled({{0, 2272, 1000, 2500}}));
}

TEST(SimPictures, TheGanttOfABigRunIsCapped) {
  TempDir dir;
  SimResult result;
  result.policy = "big";
  for (JobId id = 1; id <= 50; ++id) result.jobs.push_back(record(id, 0, id, id + 10.0, 1));
  result.end_time = 60;
  result.metrics = compute_metrics(result.jobs, 16, 0);
  PictureOptions options;
  options.max_gantt_jobs = 20;
  write_pictures(dir.path().string(), result, options);
  const std::string gantt = read_text(dir.path() / "gantt.svg");
  EXPECT_EQ(count(gantt, "<g class=\"bar\""), 20u);
  EXPECT_NE(gantt.find("the first 20 of 50 started jobs"), std::string::npos);
  // The first ones by start time.
  EXPECT_NE(gantt.find("<title>job 20 "), std::string::npos);
  EXPECT_EQ(gantt.find("<title>job 21 "), std::string::npos);
}

TEST(SimPictures, ADenseRunsUtilisationIsAlsoAveraged) {
  TempDir dir;
  SimResult result;
  result.policy = "dense";
  for (JobId id = 1; id <= 1500; ++id)
    result.jobs.push_back(record(id, 0, 2.0 * id, 2.0 * id + 1, 4));
  result.end_time = 3002;
  result.metrics = compute_metrics(result.jobs, 8, 0);
  write_pictures(dir.path().string(), result);
  const std::string svg = read_text(dir.path() / "utilisation.svg");
  EXPECT_NE(svg.find(">nodes allocated to jobs (% of 8), instantaneous</text>"), std::string::npos);
  EXPECT_NE(svg.find(">mean over each 1/200 of the run (0.25 min)</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 3u);  // instantaneous, mean, metrics.json's level
}

TEST(SimPictures, AnUnwritableFolderIsAnErrorNamingThePath) {
  try {
    write_pictures("/nonexistent-sched-dir/out", hand_made_result());
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent-sched-dir/out/gantt.svg"),
              std::string::npos)
        << error.what();
  }
}

class StartAndGrow : public Policy {
 public:
  std::string name() const override { return "start_and_grow"; }
  bool time_dependent() const override { return false; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    for (const Job* job : ctx.pending())
      if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
    for (const Job* job : ctx.running())
      if (job->spec.kind == JobKind::Malleable && job->size() < 2 && ctx.nodes_idle() > 0)
        (void)ctx.expand(job->id, 2);
    return std::nullopt;
  }
};

TEST(SimPictures, ASimulatedRunsUtilisationMatchesItsNodeTimeAndItsGanttItsJobs) {
  // Job 1 (malleable) grows 1 -> 2 when job 2 arrives at 10 (2 s to adapt);
  // job 3 waits for job 2's nodes.
  const Workload workload = parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
walltime = 100
nodes = 1
min_nodes = 1
max_nodes = 2
serial_fraction = 0
adapt_start_s = 2
adapt_alpha_s = 0
adapt_beta_s = 0
[[job]]
id = 2
submit = 10
runtime = 5
nodes = 2
[[job]]
id = 3
submit = 11
runtime = 5
nodes = 2
)",
                                         "test.toml");
  SimConfig config;
  config.tick_s = 0;
  Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<StartAndGrow>());
  const SimResult result = simulator.run();
  ASSERT_EQ(result.resizes.size(), 1u);

  double node_seconds = 0;
  for (const auto& job : result.jobs) node_seconds += job.node_seconds;
  const StepSeries busy = busy_nodes_series(result.jobs, result.resizes, result.end_time);
  EXPECT_NEAR(integral(busy), node_seconds, 1e-9);

  TempDir dir;
  write_pictures(dir.path().string(), result);
  const std::string gantt = read_text(dir.path() / "gantt.svg");
  EXPECT_EQ(count(gantt, "<g class=\"bar\""), result.jobs.size());
  EXPECT_NE(gantt.find("<title>job 1 (malleable): 1→2 nodes"), std::string::npos);
}

}  // namespace
}  // namespace sched::sim
