// The engine fixture of the invasive-partition tests (issue 20 item 2):
// n0-n1 a partition of whole nodes, n2-n3 one of cores (8 each, 2 sockets).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/core_map.hpp"

namespace sched::test {

inline PartitionSpec partition(std::string name, std::vector<std::string> nodes, PartitionKind kind,
                               bool is_default = false) {
  PartitionSpec spec;
  spec.name = std::move(name);
  spec.nodes = std::move(nodes);
  spec.kind = kind;
  spec.is_default = is_default;
  return spec;
}

inline JobSpec cores_job(int cores, std::string partition = "inv") {
  JobSpec spec;
  spec.name = "c";
  spec.user = "alice";
  spec.layout.edit().cores = cores;
  spec.partition = std::move(partition);
  return spec;
}

class Cores : public EngineFixture {
 protected:
  // n0-n1: "batch" (whole nodes, default); n2-n3: "inv" (cores), each 8
  // cores in 2 sockets.
  void SetUp() override {
    engine = std::make_unique<Engine>(clock, enactor);
    engine->add_sink(&events);
    policy = std::make_shared<ScriptedPolicy>();
    engine->set_policy(policy);
    engine->add_node("n0", 8);
    engine->add_node("n1", 8);
    engine->add_node("n2", 8);
    engine->add_node("n3", 8);
    ASSERT_TRUE(engine
                    ->set_partitions({partition("batch", {"n0", "n1"}, PartitionKind::Nodes, true),
                                      partition("inv", {"n2", "n3"}, PartitionKind::Cores)})
                    .ok());
    ASSERT_TRUE(engine->set_node_sockets("n2", 2).ok());
    ASSERT_TRUE(engine->set_node_sockets("n3", 2).ok());
    engine->run_pass_if_due();
  }

  NodeIndex node(const std::string& name) const { return *engine->cluster().find(name); }

  // A pass whose body runs in the partition "inv" only (each partition has
  // its own pass).
  void in_inv(const std::function<void(PassContext&)>& body) {
    in_pass([&](PassContext& ctx) {
      if (ctx.partition_name() == "inv") body(ctx);
    });
  }
  // Submits a job to "inv" and runs it.
  JobId run(const JobSpec& spec) {
    const JobId id = submit(spec);
    in_inv([id](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });
    engine->job_started(id);
    EXPECT_EQ(state(id), JobState::Running);
    return id;
  }
};

}  // namespace sched::test
