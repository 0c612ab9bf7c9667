// Tasks at submission (issue 16 item 1): -n without -N is sized from the
// cores of the cluster's nodes, and tasks of several cpus must fit a node.
#include <gtest/gtest.h>

#include <string>

#include "engine_fixture.hpp"

namespace sched::test {
namespace {

// Four nodes of 4 cores.
class EngineTasks : public EngineFixture {
 protected:
  void SetUp() override {
    engine = std::make_unique<Engine>(clock, enactor, EngineConfig{});
    engine->set_policy(std::make_shared<ScriptedPolicy>());
    for (int i = 0; i < 4; ++i) engine->add_node("n" + std::to_string(i), 4);
  }

  static JobSpec tasks_spec(int ntasks, int cpus, bool from_tasks = true, int nodes = 1) {
    JobSpec spec = rigid_spec(nodes);
    spec.layout.edit().ntasks = ntasks;
    spec.layout.edit().cpus_per_task = cpus;
    spec.layout.edit().nodes_from_tasks = from_tasks;
    return spec;
  }

  const JobSpec& spec_of(JobId id) const { return engine->find_job(id)->spec; }

  std::string refusal(const JobSpec& spec) {
    auto result = engine->submit(spec);
    EXPECT_FALSE(result.ok());
    return result.ok() ? "(accepted)" : result.status().message();
  }
};

TEST_F(EngineTasks, NtasksAloneGetsEnoughNodesForItsCpus) {
  auto one = engine->submit(tasks_spec(4, 1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(spec_of(*one).nodes, 1);
  EXPECT_EQ(spec_of(*one).tasks_per_node, 4);

  auto two = engine->submit(tasks_spec(5, 1));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(spec_of(*two).nodes, 2);
  EXPECT_EQ(spec_of(*two).min_nodes, 2);
  EXPECT_EQ(spec_of(*two).max_nodes, 2);
  EXPECT_EQ(spec_of(*two).tasks_per_node, 3);
  EXPECT_FALSE(spec_of(*two).layout->nodes_from_tasks) << "resolved once";

  // 3 tasks of 3 cpus on 4-core nodes: one per node.
  auto three = engine->submit(tasks_spec(3, 3));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(spec_of(*three).nodes, 3);
}

TEST_F(EngineTasks, TooManyCpusPerTaskIsRefused) {
  EXPECT_EQ(refusal(tasks_spec(1, 1000)),
            "--cpus-per-task=1000 is more than the 4 cores of the cluster's nodes");
  EXPECT_EQ(refusal(tasks_spec(2, 5, false)),
            "--cpus-per-task=5 is more than the 4 cores of the cluster's nodes");
  EXPECT_TRUE(engine->jobs().empty()) << "nothing submitted";
}

TEST_F(EngineTasks, TasksOfANodeMustFitItsCores) {
  // -N 1 -n 3 -c 2: 6 cores on a node of 4.
  EXPECT_EQ(refusal(tasks_spec(3, 2, false, 1)),
            "3 tasks × 2 cpus on a node need 6 cores; the cluster's nodes have 4");
  EXPECT_TRUE(engine->submit(tasks_spec(4, 2, false, 2)).ok()) << "2 × 2 on each of 2 nodes";
  // Too many nodes for the job: the size check still speaks.
  EXPECT_NE(refusal(tasks_spec(20, 4)).find("nodes; the cluster has 4"), std::string::npos);
}

TEST_F(EngineTasks, FewerTasksThanNodesIsRefused) {
  EXPECT_EQ(refusal(tasks_spec(1, 1, false, 2)),
            "--ntasks=1 is fewer tasks than the job's 2 nodes (every node runs at least one)");
  JobSpec malleable = malleable_spec(2, 1, 4);
  malleable.layout.edit().nodes_from_tasks = true;
  malleable.layout.edit().ntasks = 4;
  EXPECT_EQ(refusal(malleable), "only a rigid job with --ntasks gets its nodes from its tasks");
}

}  // namespace
}  // namespace sched::test
