// The [partitions.NAME] tables of schedd's config (issue 20 item 1;
// docs/admin.md "Partitions"): none by default, read with host lists and
// Slurm's time forms, checked (a node in two partitions, two defaults, bad
// keys and values are errors naming the key), and what a reload takes live.
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

TEST(PartitionConfig, NoneByDefault) {
  luatest::TempDir dir;
  EXPECT_TRUE(DaemonConfig{}.partitions.empty());
  EXPECT_TRUE(load_config(dir.write("empty.toml", "")).partitions.empty());
}

TEST(PartitionConfig, TheKeysAreRead) {
  luatest::TempDir dir;
  const DaemonConfig c = load_config(dir.write("ok.toml", R"(
[scheduler.params]
incremental = true
depth = 3
[partitions.wide]
nodes = ["n3", "n[4-5]"]
policy = "perf_aware"
max_nodes = 2
users = ["alice"]
groups = ["hpc"]
state = "drain"
default_time = 5
[partitions.wide.params]
depth = 7
[partitions.batch]
nodes = "n[1-2]"
default = true
max_time = "1-02:03:04"
)"));
  ASSERT_EQ(c.partitions.size(), 2u);
  // In name order.
  const auto& batch = c.partitions[0];
  const auto& wide = c.partitions[1];
  EXPECT_EQ(batch.spec.name, "batch");
  EXPECT_EQ(batch.spec.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(batch.spec.is_default);
  EXPECT_EQ(batch.spec.limits.max_time_s, 86400 + 2 * 3600 + 3 * 60 + 4);
  EXPECT_EQ(batch.policy, "") << "the [scheduler] policy runs it";
  EXPECT_EQ(wide.spec.name, "wide");
  EXPECT_EQ(wide.spec.nodes, (std::vector<std::string>{"n3", "n4", "n5"}));
  EXPECT_FALSE(wide.spec.is_default);
  EXPECT_EQ(wide.policy, "perf_aware");
  EXPECT_EQ(wide.spec.limits.max_nodes, 2);
  EXPECT_EQ(wide.spec.limits.default_time_s, 300) << "a number is minutes, as Slurm's";
  EXPECT_EQ(wide.spec.limits.users, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(wide.spec.limits.groups, (std::vector<std::string>{"hpc"}));
  EXPECT_EQ(wide.spec.state, PartitionState::Drain);
  // Its params over [scheduler.params].
  EXPECT_EQ(std::get<long long>(wide.params.at("depth")), 7);
  EXPECT_EQ(std::get<bool>(wide.params.at("incremental")), true);
  EXPECT_EQ(std::get<long long>(batch.params.at("depth")), 3);
}

TEST(PartitionConfig, TimesAsSlurmWritesThem) {
  EXPECT_EQ(parse_partition_time("30"), 1800);
  EXPECT_EQ(parse_partition_time("10:30"), 630);
  EXPECT_EQ(parse_partition_time("01:00:00"), 3600);
  EXPECT_EQ(parse_partition_time("2-00"), 2 * 86400);
  EXPECT_EQ(parse_partition_time("2-01:30"), 2 * 86400 + 3600 + 1800);
  EXPECT_EQ(parse_partition_time("UNLIMITED"), 0);
  EXPECT_EQ(parse_partition_time("1:2:3:4"), std::nullopt);
  EXPECT_EQ(parse_partition_time("ten"), std::nullopt);
  EXPECT_EQ(parse_partition_time(""), std::nullopt);
  EXPECT_EQ(parse_partition_time("-5"), std::nullopt);
}

TEST(PartitionConfig, BadPartitionsAreErrorsNamingTheKey) {
  luatest::TempDir dir;
  EXPECT_EQ(error_of(dir, "[partitions.a]\nnodes = \"n[1-3]\"\n[partitions.b]\nnodes = \"n3\"\n"),
            "partitions: node n3 is in partitions a and b: a node is in exactly one partition");
  EXPECT_EQ(error_of(dir, "[partitions.a]\ndefault = true\n[partitions.b]\ndefault = true\n"),
            "partitions: partitions a and b are both default: at most one may be");
  EXPECT_EQ(error_of(dir, "[partitions.a]\nnode = \"n1\"\n"), "partitions.a.node: unknown key");
  EXPECT_EQ(error_of(dir, "[partitions.a]\nstate = \"idle\"\n"),
            "partitions.a.state: expected \"up\", \"drain\" or \"down\"");
  EXPECT_EQ(error_of(dir, "[partitions.a]\nnodes = \"n[3-1]\"\n").find("partitions.a.nodes: "), 0u);
  EXPECT_EQ(error_of(dir, "[partitions.a]\nmax_time = \"soon\"\n").find("partitions.a.max_time: "),
            0u);
  EXPECT_EQ(error_of(dir, "[partitions.a]\nmax_time = 10\ndefault_time = 20\n"),
            "partitions: partition a: default_time is over max_time");
  EXPECT_EQ(error_of(dir, "[partitions.\"a b\"]\nnodes = \"n1\"\n"),
            "partitions: partition name 'a b': only letters, digits, '_', '-' and '.'");
  EXPECT_EQ(error_of(dir, "partitions = 3\n"), "partitions: expected [partitions.NAME] tables");
}

// Issue 20 item 2: kind = "cores" makes an invasive partition; "nodes" is
// the default.
TEST(PartitionConfig, TheKindIsNodesOrCores) {
  luatest::TempDir dir;
  const DaemonConfig c = load_config(dir.write("ok.toml", R"(
[partitions.rigid]
nodes = "n1"
[partitions.shared]
nodes = "c1"
kind = "cores"
)"));
  ASSERT_EQ(c.partitions.size(), 2u);
  for (const auto& p : c.partitions) {
    EXPECT_EQ(p.spec.kind, p.spec.name == "shared" ? PartitionKind::Cores : PartitionKind::Nodes)
        << p.spec.name;
  }
  EXPECT_EQ(error_of(dir, "[partitions.a]\nkind = \"sockets\"\n"),
            "partitions.a.kind: expected \"nodes\" or \"cores\"");
}

}  // namespace
}  // namespace sched::daemon
