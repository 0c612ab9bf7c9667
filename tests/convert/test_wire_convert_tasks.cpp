// Tasks on the wire (issue 16 item 1): -n, -c, -m and --cpu-bind go to
// schedd and back, to the batch script's launch and to `sched show job`;
// defaults stay absent, unknown names are refused.
#include <gtest/gtest.h>

#include "sched/cluster.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/envelope.hpp"

namespace sched::convert {
namespace {

JobSpec tasks_spec() {
  JobSpec spec;
  spec.name = "mpi";
  spec.nodes = 2;
  spec.layout.edit().ntasks = 6;
  spec.layout.edit().nodes_from_tasks = true;
  spec.layout.edit().cpus_per_task = 2;
  spec.layout.edit().distribution = tasks::Distribution::Cyclic;
  spec.layout.edit().cpu_bind = tasks::CpuBind::Cores;
  return spec;
}

TEST(WireConvertTasks, RoundTripThroughMsgpack) {
  const proto::JobSpecMsg wire = spec_to_wire(tasks_spec());
  EXPECT_EQ(wire.ntasks, 6);
  EXPECT_EQ(wire.cpus_per_task, 2);
  EXPECT_EQ(wire.distribution, "cyclic");
  EXPECT_EQ(wire.cpu_bind, "cores");
  EXPECT_EQ(wire.nodes_from_tasks, true);
  const auto bytes = proto::encode_request("submit", 1, proto::SubmitRequest{wire, std::nullopt});
  const proto::Envelope envelope = proto::decode(bytes.data(), bytes.size());
  JobSpec back;
  ASSERT_EQ(spec_from_wire(envelope.body_as<proto::SubmitRequest>().job, back), std::nullopt);
  EXPECT_EQ(back.layout->ntasks, 6);
  EXPECT_TRUE(back.layout->nodes_from_tasks);
  EXPECT_EQ(back.layout->cpus_per_task, 2);
  EXPECT_EQ(back.layout->distribution, tasks::Distribution::Cyclic);
  EXPECT_EQ(back.layout->cpu_bind, tasks::CpuBind::Cores);
}

TEST(WireConvertTasks, ACoreRangeGoesToSchedd) {
  // Issue 20 item 2: a malleable job by cores (--cores 2-8).
  JobSpec spec;
  spec.kind = JobKind::Malleable;
  spec.layout.edit().cores = 8;
  spec.layout.edit().min_cores = 2;
  spec.layout.edit().max_cores = 8;
  const proto::JobSpecMsg wire = spec_to_wire(spec);
  EXPECT_EQ(wire.cores, 8);
  EXPECT_EQ(wire.min_cores, 2);
  EXPECT_FALSE(wire.max_cores) << "the same as cores: absent";
  const auto bytes = proto::encode_request("submit", 1, proto::SubmitRequest{wire, std::nullopt});
  const proto::Envelope envelope = proto::decode(bytes.data(), bytes.size());
  JobSpec back;
  ASSERT_EQ(spec_from_wire(envelope.body_as<proto::SubmitRequest>().job, back), std::nullopt);
  EXPECT_EQ(back.layout->cores, 8);
  EXPECT_EQ(back.layout->min_cores, 2);
  EXPECT_EQ(back.layout->max_cores, 0) << "filled in from cores by Engine::submit";
  proto::JobSpecMsg bad = wire;
  bad.min_cores = 0;
  EXPECT_EQ(spec_from_wire(bad, back), "job.min_cores, job.max_cores: must be at least 1");
}

TEST(WireConvertTasks, DefaultsStayAbsent) {
  const proto::JobSpecMsg wire = spec_to_wire(JobSpec{});
  EXPECT_FALSE(wire.ntasks);
  EXPECT_FALSE(wire.cpus_per_task);
  EXPECT_FALSE(wire.distribution);
  EXPECT_FALSE(wire.cpu_bind);
  EXPECT_FALSE(wire.nodes_from_tasks);
}

TEST(WireConvertTasks, UnknownNamesAreRefusedAndChangeNothing) {
  proto::JobSpecMsg wire = spec_to_wire(tasks_spec());
  wire.distribution = "plane";
  JobSpec out = tasks_spec();
  out.name = "untouched";
  EXPECT_EQ(spec_from_wire(wire, out), "job.distribution: 'plane' is not block or cyclic");
  wire.distribution = "block";
  wire.cpu_bind = "sockets";
  EXPECT_EQ(spec_from_wire(wire, out), "job.cpu_bind: 'sockets' is not none or cores");
  EXPECT_EQ(out.name, "untouched");
}

TEST(WireConvertTasks, LaunchAndInfoCarryTheTasks) {
  Cluster cluster;
  const NodeIndex a = cluster.add_node("a");
  const NodeIndex b = cluster.add_node("b");
  Job job;
  job.id = 4;
  job.spec = tasks_spec();
  job.allocation = {a, b};
  const proto::JobLaunch launch = job_launch(job, cluster);
  EXPECT_EQ(launch.ntasks, 6);
  EXPECT_EQ(launch.cpus_per_task, 2);
  EXPECT_EQ(launch.distribution, "cyclic");
  const proto::JobInfo info = job_info(job, cluster);
  EXPECT_EQ(info.ntasks, 6);
  EXPECT_EQ(info.cpus_per_task, 2);
  EXPECT_EQ(info.distribution, "cyclic");
  EXPECT_EQ(info.cpu_bind, "cores");
}

}  // namespace
}  // namespace sched::convert
