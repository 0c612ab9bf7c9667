#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sched/sim/swf_reader.hpp"
#include "test_paths.hpp"

namespace sched::sim {
namespace {

using ::testing::HasSubstr;

// One SWF record: the fields we use, -1 for all others.
std::string record(long id, double submit, double runtime, long allocated, long requested,
                   double requested_time, long user = -1) {
  std::ostringstream line;
  line << id << ' ' << submit << " -1 " << runtime << ' ' << allocated << " -1 -1 " << requested
       << ' ' << requested_time << " -1 1 " << user << " -1 -1 0 -1 -1 -1\n";
  return line.str();
}

Workload parse(const std::string& text, SwfOptions options = {}) {
  std::istringstream in(text);
  return parse_swf(in, "test.swf", options);
}

std::string error_of(const std::string& text, SwfOptions options = {}) {
  try {
    parse(text, options);
  } catch (const WorkloadError& error) {
    return error.what();
  }
  return "no error";
}

TEST(SwfReader, ReadsFieldsOfARecord) {
  const auto workload = parse("; MaxProcs: 64\n" + record(7, 100, 3600, 4, 8, 7200, 12));
  ASSERT_EQ(workload.jobs.size(), 1u);
  const auto& job = workload.jobs[0];
  EXPECT_EQ(job.id, 7);
  EXPECT_EQ(job.submit, 100);
  EXPECT_EQ(job.runtime, 3600);
  EXPECT_EQ(job.spec.nodes, 8);  // requested processors win over allocated
  EXPECT_EQ(job.spec.min_nodes, 8);
  EXPECT_EQ(job.spec.max_nodes, 8);
  EXPECT_EQ(job.spec.walltime, 7200);
  EXPECT_EQ(job.spec.kind, JobKind::Rigid);
  EXPECT_EQ(job.spec.name, "job7");
  EXPECT_EQ(job.spec.user, "u12");
  EXPECT_EQ(workload.nodes, 64);
  EXPECT_EQ(workload.cores_per_node, 1);
  EXPECT_EQ(workload.source, "test.swf");
  EXPECT_EQ(workload.skipped, 0);
}

TEST(SwfReader, UsesAllocatedProcessorsWhenNoneRequested) {
  const auto workload =
      parse("; MaxProcs: 64\n" + record(1, 0, 10, 5, -1, -1) + record(2, 0, 10, 5, 0, -1));
  ASSERT_EQ(workload.jobs.size(), 2u);
  EXPECT_EQ(workload.jobs[0].spec.nodes, 5);
  EXPECT_EQ(workload.jobs[1].spec.nodes, 5);
}

TEST(SwfReader, NoUserWithoutPositiveUserId) {
  const auto workload =
      parse("; MaxProcs: 64\n" + record(1, 0, 10, 1, 1, -1, -1) + record(2, 0, 10, 1, 1, -1, 0));
  EXPECT_EQ(workload.jobs[0].spec.user, "");
  EXPECT_EQ(workload.jobs[1].spec.user, "");
}

TEST(SwfReader, RoundsProcessorsUpToWholeNodes) {
  SwfOptions options;
  options.cores_per_node = 4;
  const auto workload =
      parse("; MaxProcs: 64\n" + record(1, 0, 10, 1, -1, -1) + record(2, 0, 10, 4, -1, -1) +
                record(3, 0, 10, 5, -1, -1) + record(4, 0, 10, 0, 9, -1),
            options);
  ASSERT_EQ(workload.jobs.size(), 4u);
  EXPECT_EQ(workload.jobs[0].spec.nodes, 1);
  EXPECT_EQ(workload.jobs[1].spec.nodes, 1);
  EXPECT_EQ(workload.jobs[2].spec.nodes, 2);
  EXPECT_EQ(workload.jobs[3].spec.nodes, 3);
  EXPECT_EQ(workload.nodes, 16);  // 64 processors / 4
  EXPECT_EQ(workload.cores_per_node, 4);
}

TEST(SwfReader, EstimateIsRequestedTimeButNeverBelowRuntime) {
  const auto workload = parse("; MaxProcs: 8\n" + record(1, 0, 100, 1, 1, 500) +  // requested
                              record(2, 0, 100, 1, 1, -1) +                       // none: runtime
                              record(3, 0, 100, 1, 1, 0) +                        // zero: runtime
                              record(4, 0, 100, 1, 1, 60));  // too short: runtime
  ASSERT_EQ(workload.jobs.size(), 4u);
  EXPECT_EQ(workload.jobs[0].spec.walltime, 500);
  EXPECT_EQ(workload.jobs[1].spec.walltime, 100);
  EXPECT_EQ(workload.jobs[2].spec.walltime, 100);
  EXPECT_EQ(workload.jobs[3].spec.walltime, 100);
}

TEST(SwfReader, SkipsAndCountsJobsThatCannotBeReplayed) {
  const auto workload = parse("; MaxProcs: 8\n" + record(1, 0, -1, 1, 1, -1) +  // negative runtime
                              record(2, 0, 10, 0, -1, -1) +                     // no processors
                              record(3, 0, 10, -1, -1, -1) +  // unknown processors
                              record(4, 0, 10, 1, 9, -1) +    // larger than the cluster
                              record(5, 0, 0, 8, 8, -1));     // whole cluster, zero runtime: kept
  ASSERT_EQ(workload.jobs.size(), 1u);
  EXPECT_EQ(workload.jobs[0].id, 5);
  EXPECT_EQ(workload.skipped, 4);
}

TEST(SwfReader, ClusterLimitAppliesToNodesNotProcessors) {
  SwfOptions options;
  options.cores_per_node = 4;
  options.nodes = 2;
  // 8 processors fit in 2 nodes of 4 cores; 9 need 3 nodes.
  const auto workload = parse(record(1, 0, 10, 8, -1, -1) + record(2, 0, 10, 9, -1, -1), options);
  ASSERT_EQ(workload.jobs.size(), 1u);
  EXPECT_EQ(workload.jobs[0].id, 1);
  EXPECT_EQ(workload.skipped, 1);
}

TEST(SwfReader, MaxJobsCountsSkippedRecords) {
  SwfOptions options;
  options.max_jobs = 3;
  const auto workload = parse("; MaxProcs: 8\n" + record(1, 0, 10, 1, 1, -1) +
                                  record(2, 0, -1, 1, 1, -1) +  // skipped, but counts
                                  record(3, 0, 10, 1, 1, -1) + record(4, 0, 10, 1, 1, -1) +
                                  "this line is never read\n",
                              options);
  ASSERT_EQ(workload.jobs.size(), 2u);
  EXPECT_EQ(workload.jobs[0].id, 1);
  EXPECT_EQ(workload.jobs[1].id, 3);
  EXPECT_EQ(workload.skipped, 1);
}

TEST(SwfReader, ClusterSizeFromMaxProcsBeforeMaxNodes) {
  EXPECT_EQ(parse("; MaxNodes: 16\n; MaxProcs: 64\n" + record(1, 0, 1, 1, 1, -1)).nodes, 64);
  EXPECT_EQ(parse("; MaxNodes: 16\n" + record(1, 0, 1, 1, 1, -1)).nodes, 16);
  // SWF's -1 means unknown, so MaxNodes is used.
  EXPECT_EQ(parse("; MaxProcs: -1\n; MaxNodes: 16\n" + record(1, 0, 1, 1, 1, -1)).nodes, 16);
}

TEST(SwfReader, ClusterSizeDividesByCoresPerNodeRoundingDown) {
  SwfOptions options;
  options.cores_per_node = 3;
  EXPECT_EQ(parse("; MaxProcs: 64\n" + record(1, 0, 1, 1, 1, -1), options).nodes, 21);
  EXPECT_EQ(parse("; MaxNodes: 16\n" + record(1, 0, 1, 1, 1, -1), options).nodes, 5);
  // Never below one node.
  options.cores_per_node = 128;
  EXPECT_EQ(parse("; MaxProcs: 64\n" + record(1, 0, 1, 1, 1, -1), options).nodes, 1);
}

TEST(SwfReader, OptionNodesOverridesHeader) {
  SwfOptions options;
  options.nodes = 4;
  const auto workload =
      parse("; MaxProcs: 64\n" + record(1, 0, 1, 4, -1, -1) + record(2, 0, 1, 5, -1, -1), options);
  EXPECT_EQ(workload.nodes, 4);
  EXPECT_EQ(workload.jobs.size(), 1u);
  EXPECT_EQ(workload.skipped, 1);
}

TEST(SwfReader, NoClusterSizeIsAnError) {
  EXPECT_THAT(error_of(record(1, 0, 1, 1, 1, -1)), HasSubstr("no cluster size"));
  EXPECT_THAT(error_of("; Version: 2\n" + record(1, 0, 1, 1, 1, -1)), HasSubstr("test.swf"));
}

TEST(SwfReader, SortsBySubmitThenId) {
  const auto workload = parse("; MaxProcs: 8\n" + record(3, 50, 1, 1, 1, -1) +
                              record(2, 10, 1, 1, 1, -1) + record(1, 50, 1, 1, 1, -1));
  ASSERT_EQ(workload.jobs.size(), 3u);
  EXPECT_EQ(workload.jobs[0].id, 2);
  EXPECT_EQ(workload.jobs[1].id, 1);
  EXPECT_EQ(workload.jobs[2].id, 3);
}

TEST(SwfReader, IgnoresBlankLinesAndOtherComments) {
  const auto workload = parse("; Version: 2\n\n   \n;MaxProcs:8\n; Note: anything\n" +
                              record(1, 0, 1, 1, 1, -1) + "\n");
  EXPECT_EQ(workload.nodes, 8);
  EXPECT_EQ(workload.jobs.size(), 1u);
}

TEST(SwfReader, AcceptsTabsAndFractionalTimes) {
  const auto workload = parse(
      "; MaxProcs: 8\n1\t0.5\t-1\t12.25\t2\t-1\t-1\t-1\t-1\t-1\t1\t-1\t-1\t-1\t0\t-1\t-1\t-1\n");
  ASSERT_EQ(workload.jobs.size(), 1u);
  EXPECT_EQ(workload.jobs[0].submit, 0.5);
  EXPECT_EQ(workload.jobs[0].runtime, 12.25);
}

TEST(SwfReader, WrongFieldCountNamesFileAndLine) {
  const auto message =
      error_of("; MaxProcs: 8\n" + record(1, 0, 1, 1, 1, -1) + "2 0 -1 10 1 -1 -1\n");
  EXPECT_THAT(message, HasSubstr("test.swf:3:"));
  EXPECT_THAT(message, HasSubstr("expected 18 fields, found 7"));
}

TEST(SwfReader, NonNumericFieldNamesFileLineAndField) {
  const auto message =
      error_of("; MaxProcs: 8\n1 0 -1 ten 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  EXPECT_THAT(message, HasSubstr("test.swf:2:"));
  EXPECT_THAT(message, HasSubstr("field 4"));
  EXPECT_THAT(message, HasSubstr("'ten'"));
}

TEST(SwfReader, FractionalProcessorCountIsAnError) {
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 0 -1 1 1.5 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"),
              HasSubstr("test.swf:2: field 5 must be an integer"));
}

TEST(SwfReader, TruncatedLastLineNamesItsLine) {
  // The file ends inside a record, with no newline.
  const auto message = error_of("; MaxProcs: 8\n" + record(1, 0, 1, 1, 1, -1) + "2 0 -1 10");
  EXPECT_THAT(message, HasSubstr("test.swf:3: expected 18 fields, found 4"));
}

TEST(SwfReader, FieldCountIsCheckedBeforeNumbers) {
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 x 2\n"),
              HasSubstr("test.swf:2: expected 18 fields, found 3"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n" + std::string(19 * 2, ' ') +
                       "1 0 -1 1 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1 extra\n"),
              HasSubstr("test.swf:2: expected 18 fields, found 19"));
}

TEST(SwfReader, FirstFieldThatIsNotANumberIsNamed) {
  // "-1" is read apart from other numbers: what only starts with it is no number.
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 0 -1 10 1 -1x -1 -1 -1 -1 1 -1 -1 -1 0 -1 y -1\n"),
              HasSubstr("test.swf:2: field 6 is not a number: '-1x'"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 0 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 - -1\n"),
              HasSubstr("test.swf:2: field 17 is not a number: '-'"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 0 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 +1\n"),
              HasSubstr("test.swf:2: field 18 is not a number: '+1'"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n1 0 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 nan\n"),
              HasSubstr("test.swf:2: field 18 is not a number: 'nan'"));
}

TEST(SwfReader, NegativeFields) {
  // Negative values other than -1 are numbers like any other: a negative
  // run time or processor count skips the job, a negative user is none, a
  // negative estimate is no estimate; -0 and -1.0 are integers.
  const auto workload =
      parse("; MaxProcs: 8\n" + record(1, -10, 10, 2, -12, -1, -12) + record(2, 0, -10, 1, 1, -1) +
            record(3, 0, 10, -3, -1, -1) + record(4, 0, 10, 1, 1, -100) +
            "5 0 -1 10 -0 -1 -1 -1.0e0 -1 -1 1 -0 -1 -1 0 -1 -1 -1\n" +
            "-6 0 -1 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  ASSERT_EQ(workload.jobs.size(), 3u);
  EXPECT_EQ(workload.skipped, 3);  // jobs 2 and 3, and job 5 with no processors
  EXPECT_EQ(workload.jobs[0].id, 1);
  EXPECT_EQ(workload.jobs[0].submit, -10);
  EXPECT_EQ(workload.jobs[0].spec.nodes, 2);
  EXPECT_EQ(workload.jobs[0].spec.user, "");
  EXPECT_EQ(workload.jobs[1].id, -6);
  EXPECT_EQ(workload.jobs[2].id, 4);
  EXPECT_EQ(workload.jobs[2].spec.walltime, 10);
}

TEST(SwfReader, TimesBeyondTheSimulatorsBoundAreErrors) {
  // 1e20 s once made `sched sim` loop forever: the clock no longer moved.
  const std::string huge = "99999999999999999999";
  EXPECT_THAT(error_of("; MaxProcs: 8\n" + record(1, 0, 1, 1, 1, -1) + "2 0 -1 " + huge +
                       " 1 -1 -1 1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"),
              HasSubstr("test.swf:3: field 4 (run time) is beyond 1000000000 s"));
  EXPECT_THAT(
      error_of("; MaxProcs: 8\n1 " + huge + " -1 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"),
      HasSubstr("test.swf:2: field 2 (submit time) is beyond 1000000000 s"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n" + record(1, 0, 1, 1, 1, 1e10)),
              HasSubstr("test.swf:2: field 9 (requested time) is beyond 1000000000 s"));
  EXPECT_THAT(error_of("; MaxProcs: 8\n" + record(1, -2e9, 1, 1, 1, -1)),
              HasSubstr("test.swf:2: field 2 (submit time) is beyond 1000000000 s"));
  // The bound itself is a time like any other.
  const auto workload = parse("; MaxProcs: 8\n" + record(1, 1e9, 1e9, 1, 1, 1e9));
  ASSERT_EQ(workload.jobs.size(), 1u);
  EXPECT_EQ(workload.jobs[0].submit, 1e9);
  EXPECT_EQ(workload.jobs[0].runtime, 1e9);
}

TEST(SwfReader, ReadsAFileWithoutAFinalNewlineAndWithCarriageReturns) {
  const auto workload = parse(
      "; MaxProcs: 8\r\n1 0 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\r\n"
      "2 5 -1 10 2 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1");
  EXPECT_EQ(workload.nodes, 8);
  ASSERT_EQ(workload.jobs.size(), 2u);
  EXPECT_EQ(workload.jobs[1].spec.nodes, 2);
}

TEST(SwfReader, BadHeaderValueIsAnError) {
  EXPECT_THAT(error_of("; MaxProcs: lots\n"), HasSubstr("test.swf:1: MaxProcs"));
}

TEST(SwfReader, InvalidOptionsAreErrors) {
  SwfOptions options;
  options.cores_per_node = 0;
  EXPECT_THAT(error_of("", options), HasSubstr("cores_per_node"));
}

TEST(SwfReader, MissingFileIsNamed) {
  try {
    read_swf("/nonexistent/trace.swf", {});
    FAIL() << "expected WorkloadError";
  } catch (const WorkloadError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/trace.swf"));
  }
}

TEST(SwfReader, ReadsLublinTrace) {
  const std::string path = std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf";
  const auto workload = read_swf(path, {});
  EXPECT_EQ(workload.nodes, 256);
  EXPECT_EQ(workload.source, path);
  EXPECT_EQ(workload.jobs.size() + static_cast<std::size_t>(workload.skipped), 10000u);
  EXPECT_EQ(workload.jobs.size(), 10000u);
  ASSERT_FALSE(workload.jobs.empty());
  EXPECT_EQ(workload.jobs.front().id, 1);
  EXPECT_EQ(workload.jobs.front().submit, 5094);
  EXPECT_EQ(workload.jobs.front().runtime, 12072);
  EXPECT_EQ(workload.jobs.front().spec.nodes, 16);
  for (std::size_t i = 1; i < workload.jobs.size(); ++i) {
    ASSERT_LE(workload.jobs[i - 1].submit, workload.jobs[i].submit);
  }

  SwfOptions prefix;
  prefix.max_jobs = 100;
  EXPECT_EQ(read_swf(path, prefix).jobs.size(), 100u);
}

}  // namespace
}  // namespace sched::sim
