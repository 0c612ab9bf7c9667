// The [priority] and [qos.NAME] keys of schedd's config (issue 18 item 5;
// docs/admin.md): all weights 0 by default, read, checked.
#include <gtest/gtest.h>

#include "daemon_config.hpp"
#include "lua_test_support.hpp"

namespace sched::daemon {
namespace {

std::string error_of(luatest::TempDir& dir, const std::string& text) {
  try {
    load_config(dir.write("bad.toml", text));
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    return what.substr(what.find(": ") + 2);  // without the file's path
  }
  return "no error";
}

TEST(PriorityConfig, DefaultsKeepTheQueueInSubmitOrder) {
  const DaemonConfig c;
  EXPECT_EQ(c.priority.weights.age, 0);
  EXPECT_EQ(c.priority.weights.fairshare, 0);
  EXPECT_EQ(c.priority.weights.jobsize, 0);
  EXPECT_EQ(c.priority.weights.qos, 0);
  EXPECT_FALSE(c.priority.time_varying());
  EXPECT_EQ(c.priority.qos, (std::map<std::string, std::int64_t>{{"normal", 0}}));
}

TEST(PriorityConfig, TheKeysAreRead) {
  luatest::TempDir dir;
  const DaemonConfig c = load_config(dir.write(
      "ok.toml",
      "[priority]\nweight_age = 100\nweight_fairshare = 10000\nweight_jobsize = 5\n"
      "weight_qos = 2000\nmax_age_s = 3600\ndecay_half_life_s = 0\ncalc_period_s = 30\n"
      "[priority.shares]\nalice = 3\n[qos.high]\npriority = 100\n[qos.low]\npriority = 1\n"));
  EXPECT_EQ(c.priority.weights.age, 100);
  EXPECT_EQ(c.priority.weights.fairshare, 10000);
  EXPECT_EQ(c.priority.weights.jobsize, 5);
  EXPECT_EQ(c.priority.weights.qos, 2000);
  EXPECT_EQ(c.priority.max_age_s, 3600);
  EXPECT_EQ(c.priority.decay_half_life_s, 0);
  EXPECT_EQ(c.priority.calc_period_s, 30);
  EXPECT_EQ(c.priority.shares, (std::map<std::string, double>{{"alice", 3}}));
  EXPECT_EQ(c.priority.qos,
            (std::map<std::string, std::int64_t>{{"high", 100}, {"low", 1}, {"normal", 0}}));
}

TEST(PriorityConfig, BadValuesAreErrorsNamingTheKey) {
  luatest::TempDir dir;
  EXPECT_EQ(error_of(dir, "[priority]\nweight_age = -1\n"),
            "priority.weight_age: must be at least 0.000000");
  EXPECT_EQ(error_of(dir, "[priority]\nweight_site = 1\n"), "priority.weight_site: unknown key");
  EXPECT_EQ(error_of(dir, "[priority]\ncalc_period_s = 0\n"),
            "priority.calc_period_s: must be at least 0.010000");
  EXPECT_EQ(error_of(dir, "[priority.shares]\nalice = 0\n"),
            "priority.shares.alice: expected a number above 0");
  EXPECT_EQ(error_of(dir, "[qos.high]\npriority = -3\n"),
            "qos.high.priority: expected an integer from 0 to 1000000000");
  EXPECT_EQ(error_of(dir, "[qos.high]\npreempt = 1\n"), "qos.high.preempt: unknown key");
}

}  // namespace
}  // namespace sched::daemon
