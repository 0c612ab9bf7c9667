#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sched/sim/report.hpp"

namespace sched::sim {
namespace {

using ::testing::HasSubstr;

// A fresh file name under the system's temporary folder, removed afterwards.
class ReportTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }

  std::string path(const std::string& extension) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() / ("sched_report_" + std::to_string(::getpid()) +
                                                      "_" + std::string(info->name()) + extension);
    return path_.string();
  }

  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path path_;
};

TEST(ReportFormat, SecondsAsInTheInput) {
  EXPECT_EQ(format_seconds(5094), "5094");
  EXPECT_EQ(format_seconds(0), "0");
  EXPECT_EQ(format_seconds(-0.0), "0");
  EXPECT_EQ(format_seconds(12.5), "12.5");
  EXPECT_EQ(format_seconds(0.25), "0.25");
  EXPECT_EQ(format_seconds(1.0 / 3.0), "0.333333");
  EXPECT_EQ(format_seconds(2.0000001), "2");
  EXPECT_EQ(format_seconds(1234567890), "1234567890");
  EXPECT_EQ(format_seconds(-1.5), "-1.5");
}

// What the reports printed before their numbers went into one buffer.
TEST(ReportFormat, SecondsEdgeCasesAsBefore) {
  EXPECT_EQ(format_seconds(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_seconds(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_seconds(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_seconds(-0.0000004), "0");        // rounds to a negative zero
  EXPECT_EQ(format_seconds(0.0000005), "0");         // below the tie (the double)
  EXPECT_EQ(format_seconds(0.0000015), "0.000002");  // above it
  EXPECT_EQ(format_seconds(7508.9722222), "7508.972222");
  EXPECT_EQ(format_seconds(68955345), "68955345");
  EXPECT_EQ(format_seconds(1e16), "10000000000000000");
  EXPECT_EQ(format_seconds(-1e300).size(), 302u);
}

TEST_F(ReportTest, JobsCsvHeaderAndRows) {
  JobRecord done{.id = 1,
                 .submit = 5094,
                 .start = 5100.5,
                 .end = 17172.5,
                 .nodes = 16,
                 .kind = JobKind::Rigid,
                 .state = JobState::Completed,
                 .node_seconds = 0,
                 .start_nodes = 16,
                 .end_nodes = 16};
  JobRecord running{.id = 3,
                    .submit = 0.125,
                    .start = 10,
                    .end = -1,
                    .nodes = 4,
                    .kind = JobKind::Malleable,
                    .state = JobState::Running,
                    .node_seconds = 0,
                    .resizes = 3,
                    .start_nodes = 2,
                    .end_nodes = 4};
  JobRecord waiting{.id = 2,
                    .submit = 7,
                    .start = -1,
                    .end = -1,
                    .nodes = 2,
                    .kind = JobKind::Moldable,
                    .state = JobState::Pending,
                    .node_seconds = 0};
  const auto file = path(".csv");
  write_jobs_csv(file, {done, running, waiting});
  EXPECT_EQ(read(file),
            "id,submit,start,end,nodes,kind,state,resizes,start_nodes,end_nodes\n"
            "1,5094,5100.5,17172.5,16,rigid,COMPLETED,0,16,16\n"
            "3,0.125,10,,4,malleable,RUNNING,3,2,4\n"
            "2,7,,,2,moldable,PENDING,0,0,0\n");
}

TEST_F(ReportTest, EmptyCsvHasHeader) {
  const auto file = path(".csv");
  write_jobs_csv(file, {});
  EXPECT_EQ(read(file), "id,submit,start,end,nodes,kind,state,resizes,start_nodes,end_nodes\n");
}

TEST_F(ReportTest, ResizesCsvListsEveryChange) {
  const auto file = path(".csv");
  write_resizes_csv(file, {{7, 120.5, 2, 4}, {7, 300, 4, 1}, {9, 300, 1, 8}});
  EXPECT_EQ(read(file), "job,time,from,to\n7,120.5,2,4\n7,300,4,1\n9,300,1,8\n");
}

TEST_F(ReportTest, MetricsJsonKeysInOrder) {
  Metrics metrics;
  metrics.jobs = 230;
  metrics.skipped = 1;
  metrics.nodes = 32;
  metrics.makespan = 7560;
  metrics.avg_wait = 12.5;
  metrics.avg_response = 300.25;
  metrics.avg_bsld = 1.5;
  metrics.utilization = 0.75;
  metrics.violations = 2;
  metrics.energy_j = 1.5e6;
  const auto file = path(".json");
  write_metrics_json(file, metrics);

  const auto json = nlohmann::ordered_json::parse(read(file));
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"jobs", "skipped", "nodes", "makespan", "avg_wait",
                                            "avg_response", "avg_bsld", "utilization", "violations",
                                            "energy_j"}));
  EXPECT_EQ(json["jobs"], 230);
  EXPECT_EQ(json["skipped"], 1);
  EXPECT_EQ(json["nodes"], 32);
  EXPECT_EQ(json["makespan"], 7560.0);
  EXPECT_EQ(json["avg_wait"], 12.5);
  EXPECT_EQ(json["avg_response"], 300.25);
  EXPECT_EQ(json["avg_bsld"], 1.5);
  EXPECT_EQ(json["utilization"], 0.75);
  EXPECT_EQ(json["violations"], 2);
  EXPECT_EQ(json["energy_j"], 1.5e6);
  EXPECT_THAT(read(file), HasSubstr("\n  \"jobs\": 230"));  // pretty-printed
}

TEST(ReportFiles, UnwritablePathIsNamed) {
  const std::string file = "/nonexistent-dir/jobs.csv";
  try {
    write_jobs_csv(file, {});
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(file));
  }
  EXPECT_THROW(write_metrics_json("/nonexistent-dir/metrics.json", {}), std::runtime_error);
}

TEST(ReportSummary, OneLineWithTheNumbers) {
  Metrics metrics;
  metrics.jobs = 230;
  metrics.nodes = 32;
  metrics.makespan = 7560;
  metrics.avg_wait = 1234.56;
  metrics.avg_response = 1800;
  metrics.avg_bsld = 3.4249;
  metrics.utilization = 0.813;
  const auto line = format_summary("easy", metrics);
  EXPECT_EQ(line,
            "easy: 230 jobs (0 skipped) on 32 nodes, makespan 7560 s, avg wait 1234.6 s, "
            "avg response 1800 s, avg bsld 3.42, utilization 81.3%");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace sched::sim
