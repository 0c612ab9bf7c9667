// `sched sim` end to end: runs the built `sched` binary (build/cli/sched,
// named by the build as SCHED_CLI_BIN) and checks
// its exit status, messages and output files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "lua_test_support.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

namespace fs = std::filesystem;
using luatest::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

fs::path sched_binary() { return SCHED_CLI_BIN; }

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct Outcome {
  int status = -1;     // exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// Runs `sched sim ARGS` with the source tree's policy folder.
Outcome sched_sim(const std::string& args) {
  const std::string command = "SCHED_POLICY_DIR=" + quote(SCHED_SOURCE_POLICY_DIR) + " " +
                              quote(sched_binary().string()) + " sim " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, n);
  const int status = ::pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The number after "key": in a flat JSON object; NaN when absent.
double json_number(const std::string& json, const std::string& key) {
  std::smatch match;
  const std::regex pattern("\"" + key + "\"\\s*:\\s*(-?[0-9.eE+-]+)");
  if (!std::regex_search(json, match, pattern)) return std::nan("");
  return std::stod(match[1].str());
}

std::string lublin() { return std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf"; }

class CliSim : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::is_regular_file(sched_binary()))
        << "no sched binary at " << sched_binary() << " (build the 'sched' target)";
  }
  TempDir dir;
};

TEST_F(CliSim, EspUnderFcfsWritesJobsCsvAndMetricsJson) {
  const fs::path out = dir.path() / "out";
  const Outcome run = sched_sim("--workload esp --policy fcfs --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("fcfs: 230 jobs"));

  const auto lines = read_lines(out / "jobs.csv");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "id,submit,start,end,nodes,kind,state,resizes,start_nodes,end_nodes");
  EXPECT_EQ(lines.size(), 231u) << "a header and 230 rows";
  for (std::size_t i = 1; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), 9);
    EXPECT_EQ(lines[i].rfind(std::to_string(i) + ",", 0), 0u) << "rows in id order";
    EXPECT_THAT(lines[i], HasSubstr(",rigid,COMPLETED"));
  }

  const std::string json = read_text(out / "metrics.json");
  std::size_t last = 0;
  for (const char* key : {"jobs", "skipped", "nodes", "makespan", "avg_wait", "avg_response",
                          "avg_bsld", "utilization"}) {
    SCOPED_TRACE(key);
    const std::size_t at = json.find("\"" + std::string(key) + "\"");
    ASSERT_NE(at, std::string::npos);
    EXPECT_GT(at, last) << "keys in the documented order";
    last = at;
  }
  EXPECT_EQ(json_number(json, "jobs"), 230);
  EXPECT_EQ(json_number(json, "skipped"), 0);
  EXPECT_EQ(json_number(json, "nodes"), 32);
  EXPECT_GT(json_number(json, "makespan"), 0);
  const double utilization = json_number(json, "utilization");
  EXPECT_GT(utilization, 0);
  EXPECT_LE(utilization, 1);
}

TEST_F(CliSim, ComparingPoliciesWritesOneFolderEach) {
  const fs::path out = dir.path() / "cmp";
  const Outcome run =
      sched_sim("--workload esp --policy fcfs easy_backfill --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(read_lines(out / "fcfs" / "jobs.csv").size(), 231u);
  EXPECT_EQ(read_lines(out / "easy_backfill" / "jobs.csv").size(), 231u);
  EXPECT_THAT(run.output, HasSubstr("easy_backfill: 230 jobs"));
  // EASY never makes the ESP run longer than FCFS does.
  EXPECT_LE(json_number(read_text(out / "easy_backfill" / "metrics.json"), "avg_wait"),
            json_number(read_text(out / "fcfs" / "metrics.json"), "avg_wait"));
}

TEST_F(CliSim, UnknownPolicyNamesItAndTheAvailableOnes) {
  const Outcome run = sched_sim("--workload esp --policy no_such_policy");
  EXPECT_NE(run.status, 0);
  EXPECT_THAT(run.output, HasSubstr("no_such_policy"));
  EXPECT_THAT(run.output, HasSubstr("fcfs"));
  EXPECT_THAT(run.output, HasSubstr("easy_backfill"));
}

TEST_F(CliSim, PolicySyntaxErrorNamesFileAndLine) {
  const std::string policy =
      dir.write("broken.lua",
                "local P = { api = 1 }\nfunction P.schedule(ctx)\n  local = 1\nend\nreturn P\n");
  const Outcome run = sched_sim("--workload esp --policy " + quote(policy));
  EXPECT_NE(run.status, 0);
  EXPECT_THAT(run.output, HasSubstr("broken.lua:3:"));
}

TEST_F(CliSim, BadSwfLineNamesFileAndLine) {
  const std::string swf = dir.write("bad.swf",
                                    "; MaxProcs: 4\n"
                                    "1 0 -1 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                                    "2 5 -1 10 1 -1 -1\n");
  const Outcome run = sched_sim("--workload " + quote(swf) + " --policy fcfs");
  EXPECT_NE(run.status, 0);
  EXPECT_THAT(run.output, HasSubstr("bad.swf:3"));
}

TEST_F(CliSim, ARunTimeTheClockCannotStepIsRefusedAndWritesNothing) {
  // 1e20 s once made this run loop forever (issue 15).
  const std::string swf =
      dir.write("huge.swf",
                "; MaxProcs: 4\n"
                "1 0 -1 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                "2 5 -1 99999999999999999999 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n");
  const fs::path out = dir.path() / "out";
  const Outcome run =
      sched_sim("--workload " + quote(swf) + " --policy fcfs --out " + quote(out.string()));
  EXPECT_NE(run.status, 0);
  EXPECT_THAT(run.output, HasSubstr("huge.swf:3: field 4 (run time) is beyond 1000000000 s"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CliSim, MaxJobsReadsOnlyThatManyRecords) {
  const fs::path out = dir.path() / "out";
  const Outcome run = sched_sim("--workload " + quote(lublin()) +
                                " --policy fcfs --max-jobs 100 --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  const auto lines = read_lines(out / "jobs.csv");
  EXPECT_EQ(lines.size(), 101u) << "a header and 100 rows";
  const std::string json = read_text(out / "metrics.json");
  EXPECT_EQ(json_number(json, "jobs"), 100);
  EXPECT_EQ(json_number(json, "nodes"), 256) << "MaxNodes: 256 in the header";
}

TEST_F(CliSim, NodesOverridesTheSwfHeader) {
  const fs::path out = dir.path() / "out";
  const Outcome run =
      sched_sim("--workload " + quote(lublin()) +
                " --policy fcfs --max-jobs 100 --nodes 128 --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string json = read_text(out / "metrics.json");
  EXPECT_EQ(json_number(json, "nodes"), 128);
  // Jobs wider than 128 nodes cannot run there: skipped, and not in the CSV.
  const double skipped = json_number(json, "skipped");
  EXPECT_GT(skipped, 0);
  EXPECT_EQ(static_cast<double>(read_lines(out / "jobs.csv").size() - 1), 100 - skipped);
}

TEST_F(CliSim, ParamsReachThePolicyTyped) {
  const std::string policy = dir.write("typed.lua", R"lua(
local P = { name = 'typed', api = 1 }
P.time_dependent = false
function P.schedule(ctx)
  local p = ctx.params
  assert(math.type(p.count) == 'integer' and p.count == 3, 'count')
  assert(math.type(p.ratio) == 'float' and p.ratio == 2.5, 'ratio')
  assert(p.flag == true, 'flag')
  assert(p.mode == 'fast', 'mode')
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then return end
  end
end
return P
)lua");
  const Outcome run =
      sched_sim("--workload esp --max-jobs 20 --policy " + quote(policy) +
                " --param count=3 --param ratio=2.5 --param flag=true --param mode=fast");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("typed: 20 jobs"));
  EXPECT_THAT(run.output, Not(HasSubstr("passes failed")));
}

// The first pass never ends and is cut off by the instruction bound; the
// run goes on, the next pass starts both jobs, and the summary says what
// was dropped.
TEST_F(CliSim, EndlessLoopInAPolicyIsDroppedAndReported) {
  const std::string policy = dir.write("spin.lua", R"lua(
local P = { name = 'spin', api = 1 }
P.time_dependent = false
local passes = 0
function P.schedule(ctx)
  passes = passes + 1
  if passes == 1 then
    while true do end
  end
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then return end
  end
end
return P
)lua");
  const std::string workload = dir.write("two.toml",
                                         "[cluster]\nnodes = 2\n\n"
                                         "[[job]]\nsubmit = 0\nruntime = 10\n\n"
                                         "[[job]]\nsubmit = 5\nruntime = 10\n");
  const fs::path out = dir.path() / "out";
  const Outcome run = sched_sim("--workload " + quote(workload) + " --policy " + quote(policy) +
                                " --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex("\\b1 pass(es)? (failed|were dropped)")))
      << run.output;
  EXPECT_THAT(run.output, HasSubstr("instruction limit"));
  const auto lines = read_lines(out / "jobs.csv");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "1,0,5,15,1,rigid,COMPLETED,0,1,1");
  EXPECT_EQ(lines[2], "2,5,5,15,1,rigid,COMPLETED,0,1,1");
}

TEST_F(CliSim, AMissingWorkloadIsAnError) {
  const Outcome missing_option = sched_sim("--policy fcfs");
  EXPECT_NE(missing_option.status, 0);
  EXPECT_THAT(missing_option.output, HasSubstr("--workload"));
  const Outcome missing_file =
      sched_sim("--workload " + quote((dir.path() / "absent.swf").string()) + " --policy fcfs");
  EXPECT_NE(missing_file.status, 0);
  EXPECT_THAT(missing_file.output, HasSubstr("absent.swf"));
}

TEST_F(CliSim, MalleableFractionMakesEspJobsMalleableAndWritesResizes) {
  const fs::path out = dir.path() / "esp";
  const Outcome run = sched_sim("--workload esp --malleable-fraction 0.5 --policy fcfs --out " +
                                quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  const auto jobs = read_lines(out / "jobs.csv");
  ASSERT_EQ(jobs.size(), 231u);
  const auto malleable = std::count_if(jobs.begin(), jobs.end(), [](const std::string& line) {
    return line.find(",malleable,") != std::string::npos;
  });
  EXPECT_EQ(malleable, 115);
  const auto resizes = read_lines(out / "resizes.csv");
  ASSERT_FALSE(resizes.empty());
  EXPECT_EQ(resizes[0], "job,time,from,to");
  EXPECT_EQ(resizes.size(), 1u) << "fcfs never resizes";
}

TEST_F(CliSim, MalleableFractionIsCheckedAndNotForNativeWorkloads) {
  const Outcome high = sched_sim("--workload esp --malleable-fraction 1.5 --policy fcfs");
  EXPECT_NE(high.status, 0);
  EXPECT_THAT(high.output, HasSubstr("--malleable-fraction"));
  const std::string workload = dir.write("one.toml", "[[job]]\nsubmit = 0\nruntime = 1\n");
  const Outcome native =
      sched_sim("--workload " + quote(workload) + " --malleable-fraction 0.5 --policy fcfs");
  EXPECT_NE(native.status, 0);
  EXPECT_THAT(native.output, HasSubstr("applies to esp and SWF workloads"));
}

TEST_F(CliSim, SpeedupAndAdaptationChangeMalleableRunsOnlyAndAreChecked) {
  const std::string malleable = "--workload esp --malleable-fraction 1 --policy perf_aware";
  const Outcome base = sched_sim(malleable);
  const Outcome step = sched_sim(malleable + " --adaptation step");
  const Outcome linear = sched_sim(malleable + " --speedup linear");
  ASSERT_EQ(base.status, 0) << base.output;
  ASSERT_EQ(step.status, 0) << step.output;
  ASSERT_EQ(linear.status, 0) << linear.output;
  EXPECT_NE(base.output, step.output) << "the cost of every resize changed";
  EXPECT_NE(base.output, linear.output) << "the rate on every other size changed";
  // A rigid replay runs every job at its requested size: no model matters.
  const std::string rigid = "--workload " + quote(lublin()) + " --max-jobs 300 --policy fcfs";
  const Outcome plain = sched_sim(rigid);
  const Outcome modelled = sched_sim(rigid + " --speedup downey --adaptation step");
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(plain.output, modelled.output);
  const Outcome bad = sched_sim("--workload esp --policy fcfs --adaptation fast");
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.output, HasSubstr("--adaptation"));
}

TEST_F(CliSim, EspTimeLimitRoundsTheLimitsAndIsCheckedAndEspOnly) {
  // Rounded limits change what a backfilling policy may do, not the runs.
  const Outcome exact = sched_sim("--workload esp --policy easy_backfill");
  const Outcome rounded =
      sched_sim("--workload esp --policy easy_backfill --esp-time-limit round:3600");
  ASSERT_EQ(exact.status, 0) << exact.output;
  ASSERT_EQ(rounded.status, 0) << rounded.output;
  EXPECT_NE(exact.output, rounded.output) << "hour-rounded limits give another schedule";
  const Outcome bad = sched_sim("--workload esp --policy fcfs --esp-time-limit round:soon");
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.output, HasSubstr("--esp-time-limit must be exact, round:SECONDS"));
  const std::string workload = dir.write("one.toml", "[[job]]\nsubmit = 0\nruntime = 1\n");
  const Outcome native =
      sched_sim("--workload " + quote(workload) + " --esp-time-limit exact --policy fcfs");
  EXPECT_NE(native.status, 0);
  EXPECT_THAT(native.output, HasSubstr("applies to the esp workload only"));
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

TEST_F(CliSim, OutWritesPicturesThatShowTheRun) {
  const fs::path out = dir.path() / "pictures";
  const Outcome run = sched_sim(
      "--workload esp --malleable-fraction 0.5 --policy perf_aware --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  for (const char* name : {"gantt.svg", "utilisation.svg", "queue.svg"}) {
    SCOPED_TRACE(name);
    const std::string svg = read_text(out / name);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_THAT(svg, HasSubstr("</svg>"));
    EXPECT_THAT(svg, HasSubstr(">time ("));
  }

  // The jobs as jobs.csv has them (id,submit,start,end,...).
  const auto lines = read_lines(out / "jobs.csv");
  ASSERT_EQ(lines.size(), 231u);
  std::vector<std::pair<double, double>> waits;  // (submit, start)
  std::size_t started = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto fields = csv_fields(lines[i]);
    ASSERT_GE(fields.size(), 4u);
    if (!fields[2].empty()) ++started;
    waits.emplace_back(std::stod(fields[1]), fields[2].empty() ? 1e300 : std::stod(fields[2]));
  }

  // One bar per started job (all of ESP's 230), one arrow in its tooltip
  // per resize in resizes.csv.
  const std::string gantt = read_text(out / "gantt.svg");
  EXPECT_EQ(started, 230u);
  EXPECT_EQ(occurrences(gantt, "<g class=\"bar\""), started);
  const auto resizes = read_lines(out / "resizes.csv");
  ASSERT_GT(resizes.size(), 1u) << "perf_aware resizes malleable ESP jobs";
  EXPECT_EQ(occurrences(gantt, "→"), resizes.size() - 1);
  EXPECT_THAT(gantt, HasSubstr(">malleable job</text>"));
  EXPECT_THAT(gantt, HasSubstr(">rigid job</text>"));

  // The queue picture's maximum is the most jobs waiting at any instant:
  // submitted at or before it, started after it.
  std::size_t most = 0;
  for (const auto& [at, unused] : waits) {
    std::size_t waiting = 0;
    for (const auto& [submit, start] : waits) waiting += submit <= at && start > at;
    most = std::max(most, waiting);
  }
  EXPECT_GT(most, 1u);
  EXPECT_THAT(read_text(out / "queue.svg"),
              HasSubstr(">waiting jobs (max " + std::to_string(most) + ")</text>"));

  const std::string json = read_text(out / "metrics.json");
  char utilisation[32];
  std::snprintf(utilisation, sizeof utilisation, "%.1f%%", json_number(json, "utilization") * 100);
  EXPECT_THAT(read_text(out / "utilisation.svg"), HasSubstr(utilisation));
}

TEST_F(CliSim, ThePowerExperimentGetsAPowerPictureWithItsCorridor) {
  const fs::path out = dir.path() / "power";
  const Outcome run =
      sched_sim("--workload power --policy power_aware --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string svg = read_text(out / "power.svg");
  EXPECT_THAT(svg, HasSubstr(">power corridor [lower, upper]</text>"));
  EXPECT_THAT(svg, HasSubstr(">cluster power</text>"));
  EXPECT_THAT(svg, HasSubstr(">power (W)</text>"));
  // The corridor changes twice: three spans.
  EXPECT_EQ(occurrences(svg, "class=\"band\""), 3u);
}

TEST_F(CliSim, NoPicturesLeavesThemOut) {
  const fs::path out = dir.path() / "plain";
  const Outcome run =
      sched_sim("--workload esp --policy fcfs --no-pictures --out " + quote(out.string()));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(fs::exists(out / "jobs.csv"));
  for (const char* name : {"gantt.svg", "utilisation.svg", "queue.svg", "power.svg"})
    EXPECT_FALSE(fs::exists(out / name)) << name;
}

}  // namespace
}  // namespace sched
