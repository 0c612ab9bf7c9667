// Replays stay what they were (issue 15): every bundled policy on
// lublin_256.swf, on ESP, and on malleable variants of both gives, byte for
// byte, the jobs.csv that `sched sim` wrote before the simulator and the
// Lua host were made faster. The files are large, so the test keeps their
// FNV-1a digests; they were taken from `sched sim --out` at commit c4f59bb:
//   sched sim --workload lublin_256.swf --policy P --out DIR
//   sched sim --workload esp [--malleable-fraction 0.5] --policy P --out DIR
//   sched sim --workload lublin_256.swf --max-jobs 2000 --malleable-fraction 0.5 ...
// jobs.csv has since gained two columns (start_nodes, end_nodes): the digest
// covers the columns it had then, the schedule. A mismatch leaves the new
// jobs.csv in the test's temporary directory, to be compared with the old
// command's output.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "sched/lua_policy.hpp"
#include "sched/sim/elastic_workload.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/report.hpp"
#include "sched/sim/simulator.hpp"
#include "sched/sim/swf_reader.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// Each line of jobs.csv without its last `drop` columns.
std::string without_last_columns(const std::string& csv, int drop) {
  std::string out;
  std::size_t pos = 0;
  while (pos < csv.size()) {
    std::size_t end = csv.find('\n', pos);
    if (end == std::string::npos) end = csv.size();
    std::size_t cut = end;
    for (int i = 0; i < drop && cut != std::string::npos && cut > pos; ++i) {
      cut = csv.rfind(',', cut - 1);
    }
    out.append(csv, pos, (cut == std::string::npos || cut < pos ? end : cut) - pos);
    out += '\n';
    pos = end + 1;
  }
  return out;
}

std::string lublin_path() { return std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf"; }

// The workloads as `sched sim` builds them (default seed 1).
sim::Workload workload(const std::string& name) {
  if (name == "lublin") return sim::read_swf(lublin_path(), {});
  if (name == "lublin_elastic") {
    sim::SwfOptions options;
    options.max_jobs = 2000;
    sim::Workload w = sim::read_swf(lublin_path(), options);
    sim::make_swf_elastic(w, w.nodes, 0.5, 1);
    return w;
  }
  sim::EspOptions esp;
  if (name == "esp_malleable") esp.malleable_fraction = 0.5;
  return sim::make_esp(esp);
}

struct Golden {
  const char* workload;
  const char* policy;
  std::uint64_t digest;  // FNV-1a of jobs.csv
};

class ReplayGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(ReplayGolden, JobsCsvIsByteIdentical) {
  const Golden& golden = GetParam();
  // "lublin_records": lublin as `sched sim` replays a plain SWF trace, its
  // jobs kept as records and made one at a time (sim::SwfTrace, issue 15).
  const bool records = std::string(golden.workload) == "lublin_records";
  const sim::SwfTrace trace = records ? sim::read_swf_trace(lublin_path(), {}) : sim::SwfTrace{};
  const sim::Workload w = records ? sim::Workload{} : workload(golden.workload);
  auto simulator = records ? std::make_unique<sim::Simulator>(trace.header, trace, sim::SimConfig{})
                           : std::make_unique<sim::Simulator>(w, sim::SimConfig{});
  simulator->set_policy(std::shared_ptr<Policy>(LuaPolicy::load(
      std::string(SCHED_SOURCE_POLICY_DIR) + "/" + golden.policy + ".lua", LuaPolicyOptions{})));
  const sim::SimResult result = simulator->run();
  const std::string path =
      ::testing::TempDir() + "golden_" + golden.workload + "_" + golden.policy + "_jobs.csv";
  sim::write_jobs_csv(path, result.jobs);
  std::ifstream in(path, std::ios::binary);
  const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(fnv1a(without_last_columns(csv, 2)), golden.digest)
      << golden.policy << " on " << golden.workload << " no longer replays as before; see " << path;
}

std::string case_name(const ::testing::TestParamInfo<Golden>& info) {
  return std::string(info.param.workload) + "_" + info.param.policy;
}

INSTANTIATE_TEST_SUITE_P(Lublin, ReplayGolden,
                         ::testing::Values(Golden{"lublin", "easy_backfill", 0xbdece6420cc8f51cull},
                                           Golden{"lublin", "elastic", 0xbdece6420cc8f51cull},
                                           Golden{"lublin", "equipartition", 0xe2c6cf3faccd4f8cull},
                                           Golden{"lublin", "fcfs", 0xe2c6cf3faccd4f8cull},
                                           Golden{"lublin", "fpsma", 0xe2c6cf3faccd4f8cull},
                                           Golden{"lublin", "perf_aware", 0xe2c6cf3faccd4f8cull},
                                           Golden{"lublin", "power_aware", 0xe2c6cf3faccd4f8cull}),
                         case_name);

INSTANTIATE_TEST_SUITE_P(
    LublinRecords, ReplayGolden,
    ::testing::Values(Golden{"lublin_records", "easy_backfill", 0xbdece6420cc8f51cull},
                      Golden{"lublin_records", "elastic", 0xbdece6420cc8f51cull},
                      Golden{"lublin_records", "equipartition", 0xe2c6cf3faccd4f8cull},
                      Golden{"lublin_records", "fcfs", 0xe2c6cf3faccd4f8cull},
                      Golden{"lublin_records", "fpsma", 0xe2c6cf3faccd4f8cull},
                      Golden{"lublin_records", "perf_aware", 0xe2c6cf3faccd4f8cull},
                      Golden{"lublin_records", "power_aware", 0xe2c6cf3faccd4f8cull}),
    case_name);

INSTANTIATE_TEST_SUITE_P(
    LublinElastic, ReplayGolden,
    ::testing::Values(Golden{"lublin_elastic", "easy_backfill", 0x61964aef0411c04dull},
                      Golden{"lublin_elastic", "elastic", 0x341c75646a25573aull},
                      Golden{"lublin_elastic", "equipartition", 0xdee4304735cb74fdull},
                      Golden{"lublin_elastic", "fcfs", 0xdc126d093d17e795ull},
                      Golden{"lublin_elastic", "fpsma", 0xcfb2769f3665aed4ull},
                      Golden{"lublin_elastic", "perf_aware", 0x048a8a79906caeceull},
                      Golden{"lublin_elastic", "power_aware", 0xdc126d093d17e795ull}),
    case_name);

INSTANTIATE_TEST_SUITE_P(Esp, ReplayGolden,
                         ::testing::Values(Golden{"esp", "easy_backfill", 0xc305238eadd02681ull},
                                           Golden{"esp", "elastic", 0xc305238eadd02681ull},
                                           Golden{"esp", "equipartition", 0x67867da59e2f0fd8ull},
                                           Golden{"esp", "fcfs", 0x67867da59e2f0fd8ull},
                                           Golden{"esp", "fpsma", 0x67867da59e2f0fd8ull},
                                           Golden{"esp", "perf_aware", 0x67867da59e2f0fd8ull},
                                           Golden{"esp", "power_aware", 0x67867da59e2f0fd8ull}),
                         case_name);

INSTANTIATE_TEST_SUITE_P(
    EspMalleable, ReplayGolden,
    ::testing::Values(Golden{"esp_malleable", "easy_backfill", 0x2b9fb0c22ba2fa97ull},
                      Golden{"esp_malleable", "elastic", 0x9911ca52130d303bull},
                      Golden{"esp_malleable", "equipartition", 0xf51a3c0f50e01ef7ull},
                      Golden{"esp_malleable", "fcfs", 0xbb40f5e73a4eb6caull},
                      Golden{"esp_malleable", "fpsma", 0x66059cc54657bb94ull},
                      Golden{"esp_malleable", "perf_aware", 0xeba76ef09fb218dcull},
                      Golden{"esp_malleable", "power_aware", 0xbb40f5e73a4eb6caull}),
    case_name);

}  // namespace
}  // namespace sched
