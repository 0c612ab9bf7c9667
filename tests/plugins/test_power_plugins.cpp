#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/plugins/loader.hpp"
#include "sched/plugins/plugin_options.hpp"
#include "sched/plugins/power_meter.hpp"
#include "test_paths.hpp"

namespace sched::plugins {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

const std::vector<std::string> kDirs = {SCHED_PLUGIN_BUILD_DIR};

// A fresh folder, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sched-power-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << '\n';
  ASSERT_TRUE(out.good()) << path;
}

// A fake /sys/class/powercap: one folder per zone, flat, as sysfs lists them.
class FakePowercap {
 public:
  void zone(const std::string& id, const std::string& name, std::uint64_t energy_uj,
            std::uint64_t max_uj = 262143328850) {
    fs::create_directories(dir_.path() + "/" + id);
    write_file(dir_.path() + "/" + id + "/name", name);
    write_file(dir_.path() + "/" + id + "/max_energy_range_uj", std::to_string(max_uj));
    set(id, energy_uj);
  }
  void set(const std::string& id, std::uint64_t energy_uj) {
    write_file(dir_.path() + "/" + id + "/energy_uj", std::to_string(energy_uj));
  }
  std::string options() const { return "root=" + dir_.path(); }
  const std::string& root() const { return dir_.path(); }

 private:
  TempDir dir_;
};

std::string load_error(const std::string& name, const std::string& options,
                       const std::vector<std::string>& dirs = kDirs) {
  try {
    load_power_meter(name, options, dirs);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << " loaded";
  return {};
}

PowerContext context(std::vector<JobWatts> jobs = {}) {
  PowerContext ctx;
  ctx.cores = 16;
  ctx.busy_cores = jobs.empty() ? 0 : 16;
  ctx.jobs = std::move(jobs);
  ctx.idle_w = 71;
  return ctx;
}

const std::chrono::steady_clock::time_point t0{seconds(1000)};

TEST(PowerPlugins, LoadsBothMetersByName) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 0);
  EXPECT_EQ(load_power_meter("rapl", tree.options(), kDirs)->name(), "rapl");
  EXPECT_EQ(load_power_meter("model", "", kDirs)->name(), "model");
}

TEST(PowerPlugins, LoadsByPath) {
  const auto meter =
      load_power_meter(std::string(SCHED_PLUGIN_BUILD_DIR) + "/libsched_power_model.so", "", {});
  EXPECT_EQ(meter->name(), "model");
  EXPECT_NE(load_error("/no/such/libsched_power_x.so", "").find("/no/such/libsched_power_x.so"),
            std::string::npos);
}

TEST(PowerPlugins, UnknownNameSaysWhereItLooked) {
  const std::string error = load_error("nosuch", "", {"/first/dir", "/second/dir"});
  EXPECT_NE(error.find("'nosuch' not found"), std::string::npos) << error;
  EXPECT_NE(error.find("libsched_power_nosuch.so"), std::string::npos) << error;
  EXPECT_NE(error.find("/first/dir, /second/dir"), std::string::npos) << error;
  EXPECT_NE(load_error("nosuch", "", {}).find("no plugin folders given"), std::string::npos);
  EXPECT_NE(load_error("a b", "").find("neither a plain name"), std::string::npos);
}

TEST(PowerPlugins, SharedObjectWithoutFactoryIsRefused) {
  const std::string error = load_error("bad", "");
  EXPECT_NE(error.find("libsched_power_bad.so has no sched_power_meter_create"), std::string::npos)
      << error;
}

TEST(PowerPlugins, PluginErrorsComeBackAsMessages) {
  std::string error = load_error("model", "idle_w=lots");
  EXPECT_NE(error.find("libsched_power_model.so failed to start"), std::string::npos) << error;
  EXPECT_NE(error.find("idle_w=lots is not a number"), std::string::npos) << error;
  error = load_error("model", "colour=red");
  EXPECT_NE(error.find("unknown option 'colour' (known: idle_w)"), std::string::npos) << error;
  EXPECT_NE(load_error("model", "idle_w=-1").find("must not be negative"), std::string::npos);
}

TEST(PowerPlugins, FactoryRefusesAnotherAbi) {
  const std::string path = std::string(SCHED_PLUGIN_BUILD_DIR) + "/libsched_power_model.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto create = reinterpret_cast<decltype(&sched_power_meter_create)>(
      dlsym(handle, "sched_power_meter_create"));
  ASSERT_NE(create, nullptr);
  std::array<char, 16> error{};  // short: the message is cut, still terminated
  EXPECT_EQ(create(kPowerMeterAbi + 1, "", error.data(), error.size()), nullptr);
  EXPECT_EQ(std::string(error.data()), "plugin built fo");
  PowerMeter* meter = create(kPowerMeterAbi, nullptr, nullptr, 0);
  ASSERT_NE(meter, nullptr);
  delete meter;
  dlclose(handle);
}

TEST(PowerPlugins, RaplSumsPackagesAndDramOverTime) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 1'000'000);
  tree.zone("intel-rapl:0:0", "core", 0);  // inside package-0
  tree.zone("intel-rapl:0:1", "dram", 0);
  tree.zone("intel-rapl:1", "package-1", 5'000'000);
  tree.zone("intel-rapl:2", "psys", 0);  // the whole platform
  auto meter = load_power_meter("rapl", tree.options(), kDirs);

  EXPECT_FALSE(meter->sample(context(), t0));  // no interval yet
  EXPECT_NE(meter->last_error().find("first reading"), std::string::npos);

  tree.set("intel-rapl:0", 101'000'000);      // +100 J
  tree.set("intel-rapl:1", 55'000'000);       // +50 J
  tree.set("intel-rapl:0:1", 10'000'000);     // +10 J
  tree.set("intel-rapl:0:0", 1'000'000'000);  // ignored
  tree.set("intel-rapl:2", 5'000'000'000);    // ignored
  auto sample = meter->sample(context(), t0 + seconds(2));
  ASSERT_TRUE(sample) << meter->last_error();
  EXPECT_DOUBLE_EQ(sample->node_w, 80);
  EXPECT_TRUE(sample->measured);
  EXPECT_TRUE(sample->jobs_w.empty());
  EXPECT_EQ(meter->last_error(), "");

  tree.set("intel-rapl:0", 131'000'000);  // +30 J in 0.5 s
  sample = meter->sample(context(), t0 + std::chrono::milliseconds(2500));
  ASSERT_TRUE(sample) << meter->last_error();
  EXPECT_DOUBLE_EQ(sample->node_w, 60);
}

TEST(PowerPlugins, RaplHandlesWrapAround) {
  FakePowercap tree;
  const std::uint64_t max_uj = 262'143'328'850;
  tree.zone("intel-rapl:0", "package-0", max_uj - 5'000'000, max_uj);
  auto meter = load_power_meter("rapl", tree.options(), kDirs);
  ASSERT_FALSE(meter->sample(context(), t0));
  tree.set("intel-rapl:0", 15'000'000);  // 5 J to the top, 15 J after it
  const auto sample = meter->sample(context(), t0 + seconds(1));
  ASSERT_TRUE(sample) << meter->last_error();
  EXPECT_DOUBLE_EQ(sample->node_w, 20);
}

TEST(PowerPlugins, RaplSkipsIntervalsItCannotMeasure) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 0);
  auto meter = load_power_meter("rapl", tree.options(), kDirs);
  ASSERT_FALSE(meter->sample(context(), t0));

  tree.set("intel-rapl:0", 100'000'000);
  EXPECT_FALSE(meter->sample(context(), t0));  // no time passed: the interval goes on
  EXPECT_NE(meter->last_error().find("no time passed"), std::string::npos);
  auto sample = meter->sample(context(), t0 + seconds(1));
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 100);

  fs::remove(tree.root() + "/intel-rapl:0/energy_uj");
  EXPECT_FALSE(meter->sample(context(), t0 + seconds(2)));
  EXPECT_NE(meter->last_error().find("energy_uj"), std::string::npos) << meter->last_error();
  tree.set("intel-rapl:0", 500'000'000);
  EXPECT_FALSE(meter->sample(context(), t0 + seconds(3)));  // starts again
  tree.set("intel-rapl:0", 700'000'000);
  sample = meter->sample(context(), t0 + seconds(5));
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 100);
}

TEST(PowerPlugins, RaplCounterBackwardsWithoutRangeSkipsOneInterval) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 500'000'000, 0);  // no max_energy_range_uj
  auto meter = load_power_meter("rapl", tree.options(), kDirs);
  ASSERT_FALSE(meter->sample(context(), t0));
  tree.set("intel-rapl:0", 100'000'000);
  EXPECT_FALSE(meter->sample(context(), t0 + seconds(1)));
  EXPECT_NE(meter->last_error().find("intel-rapl:0: the counter went backwards"), std::string::npos)
      << meter->last_error();
  tree.set("intel-rapl:0", 150'000'000);  // measured again from the backwards reading
  const auto sample = meter->sample(context(), t0 + seconds(2));
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 50);
}

TEST(PowerPlugins, RaplSplitsThePowerOverJobs) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 0);
  auto meter = load_power_meter("rapl", tree.options(), kDirs);
  ASSERT_FALSE(meter->sample(context(), t0));
  tree.set("intel-rapl:0", 300'000'000);
  auto sample = meter->sample(context({{7, 250}}), t0 + seconds(1));
  ASSERT_TRUE(sample);
  ASSERT_EQ(sample->jobs_w.size(), 1u);
  EXPECT_EQ(sample->jobs_w[0].job, 7);
  EXPECT_DOUBLE_EQ(sample->jobs_w[0].watts, 300);  // the only job gets it all

  // Model weights 71/2 + 99 and 71/2 + 179 (see ModelTwoJobs) scale to 349 → 698.
  tree.set("intel-rapl:0", 998'000'000);
  sample = meter->sample(context({{1, 170}, {2, 250}}), t0 + seconds(2));
  ASSERT_TRUE(sample);
  ASSERT_EQ(sample->jobs_w.size(), 2u);
  EXPECT_DOUBLE_EQ(sample->jobs_w[0].watts, 269);
  EXPECT_DOUBLE_EQ(sample->jobs_w[1].watts, 429);
}

TEST(PowerPlugins, RaplWithoutZonesFailsToStart) {
  TempDir empty;
  std::string error = load_error("rapl", "root=" + empty.path());
  EXPECT_NE(error.find("libsched_power_rapl.so failed to start"), std::string::npos) << error;
  EXPECT_NE(error.find(empty.path() + " has no intel-rapl package zone"), std::string::npos)
      << error;

  error = load_error("rapl", "root=" + empty.path() + "/missing");
  EXPECT_NE(error.find("cannot list " + empty.path() + "/missing"), std::string::npos) << error;

  FakePowercap psys_only;
  psys_only.zone("intel-rapl:0", "psys", 0);
  psys_only.zone("intel-rapl-mmio:0", "package-0", 0);
  EXPECT_NE(load_error("rapl", psys_only.options()).find("has no intel-rapl package zone"),
            std::string::npos);

  FakePowercap garbage;
  garbage.zone("intel-rapl:0", "package-0", 0);
  write_file(garbage.root() + "/intel-rapl:0/energy_uj", "n/a");
  error = load_error("rapl", garbage.options());
  EXPECT_NE(error.find("'n/a' is not a counter"), std::string::npos) << error;
}

TEST(PowerPlugins, ModelIdleOnly) {
  auto meter = load_power_meter("model", "", kDirs);
  auto sample = meter->sample(context(), t0);
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 71);
  EXPECT_FALSE(sample->measured);
  EXPECT_TRUE(sample->jobs_w.empty());
  EXPECT_EQ(meter->last_error(), "");

  PowerContext ctx = context();
  ctx.idle_w = 90;  // the agent's idle_w
  EXPECT_DOUBLE_EQ(meter->sample(ctx, t0)->node_w, 90);
  // The plugin's own option wins over the agent's.
  EXPECT_DOUBLE_EQ(load_power_meter("model", " idle_w = 80 ", kDirs)->sample(ctx, t0)->node_w, 80);
}

TEST(PowerPlugins, ModelOneJob) {
  auto meter = load_power_meter("model", "", kDirs);
  auto sample = meter->sample(context({{7, 250}}), t0);
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 250);
  ASSERT_EQ(sample->jobs_w.size(), 1u);
  EXPECT_EQ(sample->jobs_w[0].job, 7);
  EXPECT_DOUBLE_EQ(sample->jobs_w[0].watts, 250);

  // No estimate, or one below idle: the node draws what it draws idle.
  EXPECT_DOUBLE_EQ(meter->sample(context({{8, 0}}), t0)->node_w, 71);
  EXPECT_DOUBLE_EQ(meter->sample(context({{8, 50}}), t0)->node_w, 71);
}

TEST(PowerPlugins, ModelTwoJobs) {
  auto meter = load_power_meter("model", "", kDirs);
  const auto sample = meter->sample(context({{1, 170}, {2, 250}}), t0);
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->node_w, 71 + 99 + 179);  // idle counts once
  ASSERT_EQ(sample->jobs_w.size(), 2u);
  EXPECT_EQ(sample->jobs_w[0].job, 1);
  EXPECT_DOUBLE_EQ(sample->jobs_w[0].watts, 35.5 + 99);
  EXPECT_EQ(sample->jobs_w[1].job, 2);
  EXPECT_DOUBLE_EQ(sample->jobs_w[1].watts, 35.5 + 179);
}

TEST(PowerPlugins, DefaultFallsBackToTheModel) {
  TempDir empty;
  std::string why;
  const auto meter = open_default_power_meter(kDirs, "root=" + empty.path(), &why);
  EXPECT_EQ(meter->name(), "model");
  EXPECT_NE(why.find("RAPL unavailable"), std::string::npos) << why;
  EXPECT_NE(why.find("has no intel-rapl package zone"), std::string::npos) << why;
  EXPECT_NE(why.find("using the model meter"), std::string::npos) << why;

  EXPECT_THROW(open_default_power_meter({}, "", &why), std::runtime_error);
}

TEST(PowerPlugins, DefaultPrefersRapl) {
  FakePowercap tree;
  tree.zone("intel-rapl:0", "package-0", 0);
  std::string why;
  EXPECT_EQ(open_default_power_meter(kDirs, tree.options(), &why)->name(), "rapl");
  EXPECT_NE(why.find("RAPL"), std::string::npos) << why;
}

TEST(PowerPlugins, DefaultDirsEndWithTheBuildTree) {
  const auto dirs = default_plugin_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.back(), SCHED_PLUGIN_BUILD_DIR);
}

TEST(PowerPlugins, ParsesOptions) {
  const auto options = parse_plugin_options(" root = /a/b ,, idle_w=71,", {"root", "idle_w"});
  EXPECT_EQ(options.at("root"), "/a/b");
  EXPECT_DOUBLE_EQ(option_number(options, "idle_w", 0), 71);
  EXPECT_DOUBLE_EQ(option_number(options, "other", 5), 5);
  EXPECT_TRUE(parse_plugin_options("", {}).empty());
  EXPECT_THROW(parse_plugin_options("root", {"root"}), std::invalid_argument);
  EXPECT_THROW(parse_plugin_options("=x", {"root"}), std::invalid_argument);
  EXPECT_THROW(parse_plugin_options("root=a,root=b", {"root"}), std::invalid_argument);
  EXPECT_THROW(parse_plugin_options("x=1", {}), std::invalid_argument);
  EXPECT_THROW(option_number({{"n", "1e999"}}, "n", 0), std::invalid_argument);
  EXPECT_THROW(option_number({{"n", "7W"}}, "n", 0), std::invalid_argument);
}

}  // namespace
}  // namespace sched::plugins
