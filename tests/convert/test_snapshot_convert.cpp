// policy.snapshot's body both ways (convert/snapshot_convert.hpp): what
// `sched policy try` gets back is what schedd's engine held, without the
// scripts; a bad spec is named and changes nothing.
#include <gtest/gtest.h>

#include "sched/convert/snapshot_convert.hpp"
#include "sched/proto/envelope.hpp"

namespace sched {
namespace {

LiveSnapshot sample() {
  LiveSnapshot s;
  s.now = 5000;
  s.nodes.push_back({"a1", 8, 2, true, false});
  s.nodes.push_back({"a2", 8, 0, false, true});
  Job running;
  running.id = 7;
  running.spec.name = "sim";
  running.spec.user = "alice";
  running.spec.kind = JobKind::Malleable;
  running.spec.nodes = 2;
  running.spec.min_nodes = 1;
  running.spec.max_nodes = 4;
  running.spec.walltime = 600;
  running.spec.command = "#!/bin/sh\nsleep 600\n";
  running.spec.extra.edit().environment = {{"HOME", "/home/alice"}};
  running.state = JobState::Running;
  running.submit_time = 4000;
  running.start_time = 4100;
  running.run.edit().limit_extension = 12.5;
  running.run.edit().mtct = 0.25;
  s.running.push_back({running, {"a1"}});
  Job waiting;
  waiting.id = 8;
  waiting.spec.user = "bob";
  waiting.spec.walltime = 60;
  waiting.submit_time = 4900;
  waiting.priority = 42;
  waiting.hold = HoldKind::Admin;
  s.pending.push_back(waiting);
  s.arrival_window_s = 3600;
  s.arrivals.push_back({7, 4000, running.spec});
  s.arrivals.push_back({8, 4900, waiting.spec});
  s.corridor_lower_w = 100;
  s.corridor_upper_w = 900;
  s.policy_name = "fcfs";
  s.policy_path = "/etc/sched/policies/fcfs.lua";
  s.policy_params = {{"alpha", "0.5"}};
  s.policy_files = {{"fcfs.lua", "return {}"}, {"lib/easy.lua", "return 1"}};
  return s;
}

TEST(SnapshotConvert, RoundTripKeepsWhatATwinNeedsAndDropsScripts) {
  const proto::PolicySnapshotReply wire = convert::snapshot_to_wire(sample());
  EXPECT_TRUE(wire.running.at(0).spec.script.empty());
  EXPECT_TRUE(wire.running.at(0).spec.env.empty());
  EXPECT_TRUE(wire.arrivals.at(0).spec.script.empty());
  // Through msgpack as schedd sends it.
  const std::string bytes = proto::encode_reply("policy.snapshot", 1, wire);
  const proto::Envelope envelope = proto::decode(bytes.data(), bytes.size());
  const auto decoded = envelope.body_as<proto::PolicySnapshotReply>();

  LiveSnapshot back;
  ASSERT_EQ(convert::snapshot_from_wire(decoded, back), std::nullopt);
  EXPECT_DOUBLE_EQ(back.now, 5000);
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[0].name, "a1");
  EXPECT_EQ(back.nodes[0].cores, 8);
  EXPECT_EQ(back.nodes[0].gpus, 2);
  EXPECT_FALSE(back.nodes[1].up);
  EXPECT_TRUE(back.nodes[1].draining);
  ASSERT_EQ(back.running.size(), 1u);
  const Job& r = back.running[0].job;
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.state, JobState::Running);
  EXPECT_EQ(r.spec.kind, JobKind::Malleable);
  EXPECT_EQ(r.spec.min_nodes, 1);
  EXPECT_EQ(r.spec.max_nodes, 4);
  EXPECT_DOUBLE_EQ(r.spec.walltime, 600);
  EXPECT_DOUBLE_EQ(r.start_time, 4100);
  EXPECT_DOUBLE_EQ(r.run->limit_extension, 12.5);
  EXPECT_EQ(r.run->mtct, 0.25);
  EXPECT_TRUE(r.spec.command.empty());
  EXPECT_EQ(back.running[0].nodes, std::vector<std::string>{"a1"});
  ASSERT_EQ(back.pending.size(), 1u);
  EXPECT_EQ(back.pending[0].id, 8);
  EXPECT_EQ(back.pending[0].state, JobState::Pending);
  EXPECT_EQ(back.pending[0].priority, 42);
  EXPECT_EQ(back.pending[0].hold, HoldKind::Admin);
  EXPECT_DOUBLE_EQ(back.pending[0].submit_time, 4900);
  EXPECT_DOUBLE_EQ(back.arrival_window_s, 3600);
  ASSERT_EQ(back.arrivals.size(), 2u);
  EXPECT_EQ(back.arrivals[1].id, 8);
  EXPECT_DOUBLE_EQ(back.arrivals[1].time, 4900);
  EXPECT_DOUBLE_EQ(back.corridor_upper_w, 900);
  EXPECT_EQ(back.policy_name, "fcfs");
  EXPECT_EQ(back.policy_path, "/etc/sched/policies/fcfs.lua");
  ASSERT_EQ(back.policy_params.size(), 1u);
  EXPECT_EQ(back.policy_params[0].second, "0.5");
  ASSERT_EQ(back.policy_files.size(), 2u);
  EXPECT_EQ(back.policy_files[1].name, "lib/easy.lua");
  EXPECT_EQ(back.policy_files[1].text, "return 1");
}

TEST(SnapshotConvert, ABadJobIsNamedAndChangesNothing) {
  proto::PolicySnapshotReply wire = convert::snapshot_to_wire(sample());
  wire.pending[0].spec.kind = "sideways";
  LiveSnapshot out;
  out.now = 1;
  const auto error = convert::snapshot_from_wire(wire, out);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("job 8"), std::string::npos) << *error;
  EXPECT_DOUBLE_EQ(out.now, 1);
  EXPECT_TRUE(out.pending.empty());

  wire = convert::snapshot_to_wire(sample());
  wire.running[0].nodelist.clear();
  EXPECT_TRUE(convert::snapshot_from_wire(wire, out));
}

}  // namespace
}  // namespace sched
