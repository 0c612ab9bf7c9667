// Partitions (issue 20 item 1; sched/partition.hpp): each partition's pass
// runs its own policy over its own jobs and nodes; an action on another
// partition's job is refused; submissions are checked against the
// partition's state, limits and who may use it; a broken policy stops only
// its own partition. Without partitions, one implicit partition holds every
// node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"

namespace sched::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A policy that starts every pending job its pass offers, in order, while
// they fit, and records what its pass saw.
std::shared_ptr<ScriptedPolicy> greedy(std::vector<std::vector<JobId>>* seen_pending,
                                       std::vector<int>* seen_total) {
  return std::make_shared<ScriptedPolicy>([=](PassContext& ctx) -> std::optional<std::string> {
    std::vector<JobId> ids;
    for (const Job* job : ctx.pending()) ids.push_back(job->id);
    seen_pending->push_back(ids);
    seen_total->push_back(ctx.nodes_total());
    for (const Job* job : ctx.pending()) {
      if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
    }
    return std::nullopt;
  });
}

PartitionSpec partition(std::string name, std::vector<std::string> nodes, bool is_default = false) {
  PartitionSpec spec;
  spec.name = std::move(name);
  spec.nodes = std::move(nodes);
  spec.is_default = is_default;
  return spec;
}

JobSpec in(JobSpec spec, std::string partition) {
  spec.partition = std::move(partition);
  return spec;
}

class Partitions : public EngineFixture {
 protected:
  // n0-n5: "batch" (default) has n0-n2, "gpu" n3-n5.
  void SetUp() override {
    init(6);
    ASSERT_TRUE(engine
                    ->set_partitions({partition("batch", {"n0", "n1", "n2"}, true),
                                      partition("gpu", {"n3", "n4", "n5"})})
                    .ok());
    engine->run_pass_if_due();  // the pass set_partitions asks for, on no jobs
  }

  std::set<NodeIndex> nodes_of(JobId id) const {
    const auto& a = job(id).allocation;
    return {a.begin(), a.end()};
  }

  Status refused(JobSpec spec) {
    auto out = engine->submit(std::move(spec));
    EXPECT_FALSE(out.ok());
    return out.ok() ? Status{} : out.status();
  }
};

TEST_F(Partitions, NodesBelongToTheirPartitionAndNewOnesToTheDefault) {
  const Cluster& c = engine->cluster();
  EXPECT_EQ(c.partition_size(0), 3);
  EXPECT_EQ(c.partition_size(1), 3);
  EXPECT_EQ(c.idle_count(0), 3);
  EXPECT_EQ(c.idle_count(1), 3);
  EXPECT_EQ(c.node(*c.find("n4")).partition, 1);
  engine->add_node("n6");  // named by no partition
  EXPECT_EQ(c.node(*c.find("n6")).partition, 0) << "the default partition takes it";
  EXPECT_EQ(c.partition_size(0), 4);
  EXPECT_TRUE(engine->partitioned());
  EXPECT_EQ(engine->partitions()[0].spec.name, "batch");
  EXPECT_TRUE(engine->partitions()[0].spec.is_default);
}

TEST_F(Partitions, TwoPoliciesEachStartOnlyTheirJobsOnTheirNodes) {
  std::vector<std::vector<JobId>> seen_a, seen_b;
  std::vector<int> total_a, total_b;
  ASSERT_TRUE(engine->set_partition_policy("batch", greedy(&seen_a, &total_a)).ok());
  ASSERT_TRUE(engine->set_partition_policy("gpu", greedy(&seen_b, &total_b)).ok());
  const JobId a1 = submit(rigid_spec(2));               // batch, the default
  const JobId b1 = submit(in(rigid_spec(3), "gpu"));    // gpu
  const JobId a2 = submit(in(rigid_spec(2), "batch"));  // batch: does not fit after a1
  const JobId b2 = submit(in(rigid_spec(1), "gpu"));    // gpu: does not fit after b1
  engine->run_pass_if_due();

  ASSERT_FALSE(seen_a.empty());
  ASSERT_FALSE(seen_b.empty());
  EXPECT_EQ(seen_a.back(), (std::vector<JobId>{a1, a2})) << "batch's pass sees batch's jobs only";
  EXPECT_EQ(seen_b.back(), (std::vector<JobId>{b1, b2}));
  EXPECT_EQ(total_a.back(), 3);
  EXPECT_EQ(total_b.back(), 3);
  EXPECT_EQ(state(a1), JobState::Starting);
  EXPECT_EQ(state(b1), JobState::Starting);
  EXPECT_EQ(state(a2), JobState::Pending) << "batch has 1 node left; gpu's idle do not count";
  EXPECT_EQ(state(b2), JobState::Pending);
  EXPECT_EQ(nodes_of(a1), (std::set<NodeIndex>{0, 1}));
  EXPECT_EQ(nodes_of(b1), (std::set<NodeIndex>{3, 4, 5}));
  EXPECT_EQ(job(b1).spec.partition, "gpu");
  EXPECT_EQ(job(a1).spec.partition, "batch") << "the default partition's name is filled in";
  // The events of each pass name its partition.
  std::vector<std::string> passes;
  for (const Event& e : events.events) {
    if (e.type == EventType::SchedPass) passes.push_back(e.partition);
  }
  ASSERT_GE(passes.size(), 2u);
  EXPECT_THAT(std::vector<std::string>(passes.end() - 2, passes.end()),
              ElementsAre("batch", "gpu"));
}

TEST_F(Partitions, ActionsOnAnotherPartitionsJobAreRefused) {
  const JobId g = submit(in(rigid_spec(1), "gpu"));
  const JobId m = submit(in(malleable_spec(1, 1, 3), "gpu"));
  // The engine's policy runs both partitions' passes (neither has its own):
  // the batch pass may not touch gpu's jobs, the gpu pass may.
  std::vector<RefusalCode> codes;
  std::vector<std::string> details;
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    if (ctx.partition_name() != "batch") return std::nullopt;
    for (JobId id : {g, m}) {
      if (auto refusal = ctx.start(id)) {
        codes.push_back(refusal->code);
        details.push_back(refusal->detail);
      }
    }
    if (auto refusal = ctx.reserve(g, 100)) codes.push_back(refusal->code);
    return std::nullopt;
  });
  engine->run_pass(PassReason::Manual);
  EXPECT_THAT(codes,
              ElementsAre(RefusalCode::Partition, RefusalCode::Partition, RefusalCode::Partition));
  ASSERT_FALSE(details.empty());
  EXPECT_THAT(details[0], HasSubstr("partition gpu"));
  EXPECT_EQ(state(g), JobState::Pending);
  EXPECT_EQ(to_string(RefusalCode::Partition), "partition");

  // Running in gpu: resizes, preemption and suspension from batch's pass are refused too.
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    if (ctx.partition_name() == "gpu") (void)ctx.start(m);
    return std::nullopt;
  });
  engine->run_pass(PassReason::Manual);
  engine->job_started(m);
  ASSERT_EQ(state(m), JobState::Running);
  codes.clear();
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    if (ctx.partition_name() != "batch") return std::nullopt;
    EXPECT_TRUE(ctx.running().empty()) << "batch's pass sees no gpu job running";
    for (auto refusal : {ctx.expand(m, 2), ctx.preempt(m, PreemptMode::Requeue), ctx.suspend(m),
                         ctx.request_perf(m)}) {
      if (refusal) codes.push_back(refusal->code);
    }
    return std::nullopt;
  });
  engine->run_pass(PassReason::Manual);
  EXPECT_THAT(codes, ElementsAre(RefusalCode::Partition, RefusalCode::Partition,
                                 RefusalCode::Partition, RefusalCode::Partition));
}

TEST_F(Partitions, AnExpandTakesOnlyItsPartitionsNodes) {
  const JobId m = submit(in(malleable_spec(2, 1, 6), "batch"));
  in_pass([&](PassContext& ctx) {
    if (ctx.partition_name() == "batch") {
      EXPECT_EQ(ctx.start(m), std::nullopt);
    }
  });
  engine->job_started(m);
  in_pass([&](PassContext& ctx) {
    if (ctx.partition_name() != "batch") return;
    EXPECT_EQ(ctx.nodes_idle(), 1) << "gpu's three idle nodes are not batch's";
    auto refusal = ctx.expand(m, 4);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::OverAllocation);
    EXPECT_EQ(ctx.expand(m, 3), std::nullopt);
  });
  engine->adaptation_done(m, true);
  EXPECT_EQ(nodes_of(m), (std::set<NodeIndex>{0, 1, 2}));
}

TEST_F(Partitions, PlacedJobsArePlacedInTheirPartition) {
  JobSpec spec = in(rigid_spec(1), "gpu");
  spec.extra.edit().exclude = {"n3"};
  const JobId g = submit(spec);
  in_pass([&](PassContext& ctx) {
    if (ctx.partition_name() == "gpu") {
      EXPECT_EQ(ctx.start(g), std::nullopt);
    }
  });
  EXPECT_EQ(nodes_of(g), (std::set<NodeIndex>{4})) << "not n0: that is batch's";
  JobSpec wrong = in(rigid_spec(1), "gpu");
  wrong.extra.edit().nodelist = {"n1"};
  EXPECT_THAT(refused(wrong).message(), HasSubstr("n1 (-w) is not in partition gpu"));
}

TEST_F(Partitions, SubmissionsAreCheckedAgainstThePartition) {
  EXPECT_THAT(refused(in(rigid_spec(1), "debug")).message(),
              HasSubstr("invalid partition specified: debug (partitions: batch, gpu)"));
  EXPECT_THAT(refused(in(rigid_spec(4), "gpu")).message(),
              HasSubstr("job needs 4 nodes; partition gpu has 3"));

  PartitionLimits limits;
  limits.max_time_s = 3600;
  limits.default_time_s = 600;
  limits.max_nodes = 2;
  limits.users = {"alice"};
  limits.groups = {"physics"};
  ASSERT_TRUE(engine->set_partition_limits("gpu", limits).ok());
  engine->set_group_lookup([](const std::string& user) {
    return user == "bob" ? std::vector<std::string>{"users", "physics"}
                         : std::vector<std::string>{"users"};
  });
  JobSpec spec = in(rigid_spec(1), "gpu");
  spec.user = "carol";
  EXPECT_THAT(refused(spec).message(), HasSubstr("User carol may not submit to partition gpu"));
  spec.user = "bob";  // in an allowed group
  const JobId by_group = submit(spec);
  EXPECT_EQ(job(by_group).spec.walltime, 600) << "the partition's default time";
  spec.user = "alice";
  spec.walltime = 7200;
  EXPECT_THAT(refused(spec).message(),
              HasSubstr("Requested time limit 02:00:00 is over partition gpu's max_time 01:00:00"));
  spec.walltime = 0;
  spec.nodes = spec.min_nodes = spec.max_nodes = 3;
  EXPECT_THAT(refused(spec).message(), HasSubstr("partition gpu's max_nodes is 2"));

  // Without a default time, a job without a limit gets the maximum.
  limits.default_time_s = 0;
  ASSERT_TRUE(engine->set_partition_limits("gpu", limits).ok());
  JobSpec plain = in(rigid_spec(1), "gpu");
  plain.user = "alice";
  EXPECT_EQ(job(submit(plain)).spec.walltime, 3600);

  limits.default_time_s = 7200;  // over max_time: refused, nothing changed
  EXPECT_FALSE(engine->set_partition_limits("gpu", limits).ok());
  EXPECT_EQ(engine->partitions()[1].spec.limits.default_time_s, 0);
}

TEST_F(Partitions, DrainTakesNoJobsButStartsItsOwnAndDownStartsNothing) {
  const JobId queued = submit(in(rigid_spec(1), "gpu"));
  ASSERT_TRUE(engine->set_partition_state("gpu", PartitionState::Drain, "maintenance").ok());
  const Event& changed = events.events.back();
  EXPECT_EQ(changed.type, EventType::PartitionState);
  EXPECT_EQ(topic(changed.type), "partition.state");
  EXPECT_EQ(changed.partition, "gpu");
  EXPECT_EQ(changed.code, "drain");
  EXPECT_EQ(changed.message, "maintenance");
  auto out = engine->submit(in(rigid_spec(1), "gpu"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::Conflict);
  EXPECT_THAT(out.status().message(), HasSubstr("Partition gpu is in state drain"));

  // down: nothing starts there; batch goes on.
  ASSERT_TRUE(engine->set_partition_state("gpu", PartitionState::Down, "").ok());
  std::vector<std::string> passes;
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    passes.push_back(ctx.partition_name());
    for (const Job* job : ctx.pending()) (void)ctx.start(job->id);
    return std::nullopt;
  });
  const JobId b = submit(rigid_spec(1));
  engine->run_pass(PassReason::Manual);
  EXPECT_THAT(passes, ElementsAre("batch")) << "a down partition has no pass";
  EXPECT_EQ(state(queued), JobState::Pending);
  EXPECT_EQ(state(b), JobState::Starting);
  EXPECT_FALSE(engine->submit(in(rigid_spec(1), "gpu")).ok());

  // drain again: what it holds starts.
  ASSERT_TRUE(engine->set_partition_state("gpu", PartitionState::Drain, "").ok());
  engine->run_pass(PassReason::Manual);
  EXPECT_EQ(state(queued), JobState::Starting);
  EXPECT_EQ(engine->set_partition_state("nope", PartitionState::Up).code(), StatusCode::NotFound);
}

TEST_F(Partitions, ABrokenPolicyStopsOnlyItsPartition) {
  std::vector<std::vector<JobId>> seen;
  std::vector<int> total;
  // Neither looks at the clock: only a failure makes a tick's pass worth running.
  auto broken = std::make_shared<ScriptedPolicy>(
      [](PassContext&) -> std::optional<std::string> { return "attempt to index a nil value"; },
      false);
  auto good = greedy(&seen, &total);
  good->set_time_dependent(false);
  ASSERT_TRUE(engine->set_partition_policy("gpu", broken).ok());
  ASSERT_TRUE(engine->set_partition_policy("batch", good).ok());
  const JobId g = submit(in(rigid_spec(1), "gpu"));
  const JobId a = submit(rigid_spec(1));
  engine->run_pass_if_due();
  EXPECT_EQ(state(a), JobState::Starting);
  EXPECT_EQ(state(g), JobState::Pending);
  bool error_named_gpu = false;
  for (const Event& e : events.events) {
    if (e.type == EventType::PolicyError && e.partition == "gpu") error_named_gpu = true;
  }
  EXPECT_TRUE(error_named_gpu);
  EXPECT_EQ(engine->stats().failed, 1u);
  // The failed partition's pass is tried again on the next tick, though
  // nothing changed and no policy looks at the clock.
  const int before = broken->passes;
  clock.advance(1);
  engine->tick();
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(broken->passes, before + 1);
  // Once it works, a tick that changed nothing runs no pass.
  broken->set_script({});
  clock.advance(1);
  engine->tick();
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(state(g), JobState::Pending) << "its script now does nothing";
  clock.advance(1);
  engine->tick();
  EXPECT_FALSE(engine->run_pass_if_due());
}

TEST_F(Partitions, PartitionsAreRefusedWhenANodeIsInTwoOrTwoAreDefault) {
  auto two = engine->set_partitions({partition("a", {"n0", "n1"}), partition("b", {"n1"})});
  EXPECT_THAT(two.message(), HasSubstr("node n1 is in partitions a and b"));
  auto defaults = engine->set_partitions({partition("a", {"n0"}, true), partition("b", {}, true)});
  EXPECT_THAT(defaults.message(), HasSubstr("are both default"));
  auto names = engine->set_partitions({partition("a b", {"n0"})});
  EXPECT_FALSE(names.ok());
  // Nothing changed.
  EXPECT_EQ(engine->partitions().size(), 2u);
  EXPECT_EQ(engine->partitions()[1].spec.name, "gpu");
  EXPECT_EQ(engine->cluster().node(4).partition, 1);
  (void)submit(rigid_spec(1));
  EXPECT_EQ(engine->set_partitions({}).code(), StatusCode::Conflict)
      << "a job's partition is fixed once it exists";
}

TEST_F(Partitions, ALuaPolicySeesItsPartitionOnly) {
  luatest::TempDir dir;
  const std::string file = dir.write("p.lua", R"lua(
local P = { name = 'sees', api = 1 }
local seen = {}
function P.schedule(ctx)
  local ids = {}
  for _, job in ipairs(ctx.pending) do ids[#ids + 1] = job.id end
  seen[ctx.partition] = { total = ctx.nodes_total, idle = ctx.nodes_idle, pending = ids,
                          running = #ctx.running }
  for _, job in ipairs(ctx.pending) do ctx:start(job) end
end
function P.save() return seen end
return P
)lua");
  std::shared_ptr<LuaPolicy> lua = LuaPolicy::load(file, {});
  engine->set_policy(lua);  // runs both partitions' passes
  const JobId g = submit(in(rigid_spec(2), "gpu"));
  const JobId a = submit(rigid_spec(1));
  const JobId g2 = submit(in(rigid_spec(1), "gpu"));
  engine->run_pass_if_due();
  const luatest::LuaData seen = luatest::LuaData::saved_by(*lua);
  EXPECT_EQ(seen.num("batch.total"), 3);
  EXPECT_EQ(seen.num("gpu.total"), 3);
  EXPECT_EQ(seen.num("batch.pending.1"), static_cast<double>(a));
  EXPECT_TRUE(seen.is_nil("batch.pending.2"));
  EXPECT_EQ(seen.num("gpu.pending.1"), static_cast<double>(g));
  EXPECT_EQ(seen.num("gpu.pending.2"), static_cast<double>(g2));
  EXPECT_EQ(state(a), JobState::Starting);
  EXPECT_EQ(state(g), JobState::Starting);
  EXPECT_EQ(state(g2), JobState::Starting);
  // A job submitted later shows in its own partition's list only.
  const JobId a2 = submit(rigid_spec(1));
  engine->run_pass_if_due();
  const luatest::LuaData again = luatest::LuaData::saved_by(*lua);
  EXPECT_EQ(again.num("batch.pending.1"), static_cast<double>(a2));
  EXPECT_TRUE(again.is_nil("batch.pending.2"));
  EXPECT_TRUE(again.is_nil("gpu.pending.1"));
}

// Without configured partitions: one implicit partition, "batch", with every
// node; -p batch is fine, any other name refused; passes see everything.
class ImplicitPartition : public EngineFixture {
 protected:
  void SetUp() override { init(4); }
};

TEST_F(ImplicitPartition, HoldsEveryNodeAndIsTheOnlyName) {
  EXPECT_FALSE(engine->partitioned());
  ASSERT_EQ(engine->partitions().size(), 1u);
  EXPECT_EQ(engine->partitions()[0].spec.name, kImplicitPartition);
  EXPECT_EQ(engine->cluster().partition_size(0), 4);
  const JobId a = submit(rigid_spec(1));
  EXPECT_EQ(job(a).spec.partition, "batch");
  EXPECT_TRUE(engine->submit(in(rigid_spec(1), "batch")).ok());
  EXPECT_THAT(engine->submit(in(rigid_spec(1), "gpu")).status().message(),
              HasSubstr("invalid partition specified: gpu (partitions: batch)"));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.partition(), -1);
    EXPECT_EQ(ctx.nodes_total(), 4);
    EXPECT_EQ(ctx.pending_count(), 2u);
  });
}

}  // namespace
}  // namespace sched::test
