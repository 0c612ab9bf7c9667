// The conversion layer between engine and wire types (convert/): a job spec
// survives the trip to the wire and back, through msgpack too; unknown names
// are refused without touching the result.
#include <gtest/gtest.h>

#include <tuple>

#include "sched/cluster.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/lua_policy.hpp"
#include "sched/proto/envelope.hpp"

namespace sched::convert {
namespace {

JobSpec full_spec() {
  JobSpec spec;
  spec.name = "heat";
  spec.user = "ada";
  spec.kind = JobKind::Malleable;
  spec.nodes = 4;
  spec.min_nodes = 2;
  spec.max_nodes = 8;
  spec.constraint = NodeConstraint::Pof2;
  spec.tasks_per_node = 3;
  spec.walltime = 3600;
  spec.power_min_w = 150;
  spec.power_max_w = 250;
  spec.urgent = true;
  spec.command = "#!/bin/sh\nsrun ./heat\n";
  spec.workdir = "/home/ada/run";
  spec.extra.edit().output = "/home/ada/run/heat.log";
  // Sorted and unique, as the wire's map gives them back.
  spec.extra.edit().environment = {{"A", "1"}, {"OMP_NUM_THREADS", "2"}};
  spec.extra.edit().mem_bytes = std::uint64_t{3} << 30;
  // ---- issue 18 item 2
  spec.extra.edit().dependency = "afterok:1?afternotok:1";
  spec.extra.edit().begin_time = 1795514400;
  spec.hold = true;
  spec.extra.edit().error = "/home/ada/run/heat-%j.err";
  spec.extra.edit().args = {"a b", "", "-N"};
  // ---- priority (issue 18 item 5)
  spec.extra.edit().account = "physics";
  spec.qos = "high";
  spec.nice = -12;
  // ---- issue 18 item 4
  spec.extra.edit().nodelist = {"n1", "n2"};
  spec.extra.edit().exclude = {"n9"};
  spec.extra.edit().gpus_per_node = 2;
  return spec;
}

auto fields(const JobSpec& s) {
  return std::tie(s.name, s.user, s.kind, s.nodes, s.min_nodes, s.max_nodes, s.constraint,
                  s.tasks_per_node, s.walltime, s.power_min_w, s.power_max_w, s.urgent, s.command,
                  s.workdir, s.extra->output, s.extra->environment, s.extra->mem_bytes,
                  s.extra->dependency, s.extra->begin_time, s.hold, s.extra->error, s.extra->args,
                  s.extra->account, s.qos, s.nice, s.extra->nodelist, s.extra->exclude,
                  s.extra->gpus_per_node);
}

TEST(WireConvert, SpecRoundTrip) {
  const JobSpec spec = full_spec();
  const proto::JobSpecMsg wire = spec_to_wire(spec);
  EXPECT_EQ(wire.kind, "malleable");
  EXPECT_EQ(wire.node_constraint, "pof2");
  EXPECT_EQ(wire.script, spec.command);
  ASSERT_TRUE(wire.output.has_value());
  JobSpec back;
  ASSERT_EQ(spec_from_wire(wire, back), std::nullopt);
  EXPECT_EQ(fields(back), fields(spec));
}

TEST(WireConvert, SpecRoundTripThroughMsgpack) {
  const JobSpec spec = full_spec();
  const std::string bytes =
      proto::encode_request("submit", 1, proto::SubmitRequest{spec_to_wire(spec), std::nullopt});
  const proto::Envelope envelope = proto::decode(bytes.data(), bytes.size());
  JobSpec back;
  ASSERT_EQ(spec_from_wire(envelope.body_as<proto::SubmitRequest>().job, back), std::nullopt);
  EXPECT_EQ(fields(back), fields(spec));
}

TEST(WireConvert, NoOutputStaysAbsent) {
  JobSpec spec = full_spec();
  spec.extra.edit().output.clear();
  const proto::JobSpecMsg wire = spec_to_wire(spec);
  EXPECT_FALSE(wire.output.has_value()) << "the daemon chooses the default file";
  JobSpec back;
  ASSERT_EQ(spec_from_wire(wire, back), std::nullopt);
  EXPECT_EQ(back.extra->output, "");
}

TEST(WireConvert, UnknownNamesAreRefusedAndChangeNothing) {
  proto::JobSpecMsg wire = spec_to_wire(full_spec());
  wire.kind = "stretchy";
  JobSpec out;
  out.name = "untouched";
  const auto kind_error = spec_from_wire(wire, out);
  ASSERT_TRUE(kind_error.has_value());
  EXPECT_EQ(*kind_error, "unknown kind 'stretchy' (rigid, moldable, malleable or evolving)");
  EXPECT_EQ(out.name, "untouched");

  wire.kind = "rigid";
  wire.node_constraint = "prime";
  const auto constraint_error = spec_from_wire(wire, out);
  ASSERT_TRUE(constraint_error.has_value());
  EXPECT_EQ(*constraint_error, "unknown node constraint 'prime' (none, pof2, even, odd or ncube)");
  EXPECT_EQ(out.name, "untouched");
}

TEST(WireConvert, JobLaunchCarriesTheSpecAndTheNodes) {
  Cluster cluster;
  cluster.add_node("n1");
  const NodeIndex n2 = cluster.add_node("n2");
  const NodeIndex n3 = cluster.add_node("n3");
  Job job;
  job.id = 7;
  job.spec = full_spec();
  job.spec.extra.edit().output.clear();
  job.allocation = {n3, n2};  // leader first
  const proto::JobLaunch launch = job_launch(job, cluster);
  EXPECT_EQ(launch.job, 7);
  EXPECT_EQ(launch.name, "heat");
  EXPECT_EQ(launch.user, "ada");
  EXPECT_EQ(launch.script, job.spec.command);
  EXPECT_EQ(launch.workdir, "/home/ada/run");
  EXPECT_EQ(launch.output, "/home/ada/run/sched-7.out");
  EXPECT_EQ(launch.env, (std::map<std::string, std::string>{{"A", "1"}, {"OMP_NUM_THREADS", "2"}}));
  EXPECT_EQ(launch.nodes, (std::vector<std::string>{"n3", "n2"}));
  EXPECT_EQ(launch.tasks_per_node, 3);
  EXPECT_DOUBLE_EQ(launch.power_w, 200);
  EXPECT_EQ(launch.mem_bytes, std::int64_t{3} << 30);
}

TEST(WireConvert, JobInfoCarriesPriorityWhilePending) {
  Cluster cluster;
  cluster.add_node("n1");
  Job job;
  job.id = 5;
  job.spec = full_spec();
  job.priority = 1230;
  job.weighted = WeightedFactors{1000, 200, 30, 0};
  proto::JobInfo info = job_info(job, cluster);
  EXPECT_EQ(info.account, "physics");
  EXPECT_EQ(info.qos, "high");
  EXPECT_EQ(info.nice, -12);
  EXPECT_EQ(info.priority, 1230);
  ASSERT_TRUE(info.factors);
  EXPECT_EQ(info.factors->age, 1000);
  EXPECT_EQ(info.factors->fairshare, 200);
  EXPECT_EQ(info.factors->jobsize, 30);
  job.state = JobState::Running;
  info = job_info(job, cluster);
  EXPECT_FALSE(info.priority) << "a priority means something only while pending";
  EXPECT_FALSE(info.factors);
  EXPECT_EQ(info.qos, "high") << "recorded for accounting";
}

TEST(WireConvert, JobLaunchExpandsOutputPatternsWithTheLeadersName) {
  Cluster cluster;
  cluster.add_node("n1");
  const NodeIndex n2 = cluster.add_node("n2");
  Job job;
  job.id = 42;
  job.spec = full_spec();
  job.spec.extra.edit().output = "/o/%x-%j-%N-%u.%A_%a.out";
  job.spec.extra.edit().error = "/o/%5j.err";
  job.allocation = {n2};
  const proto::JobLaunch launch = job_launch(job, cluster);
  EXPECT_EQ(launch.output, "/o/heat-42-n2-ada.42_4294967294.out");
  EXPECT_EQ(launch.error, "/o/00042.err");
  EXPECT_EQ(launch.args, (std::vector<std::string>{"a b", "", "-N"}));
  EXPECT_EQ(launch.gpus, 2);
  // What clients see: the same names once placed; %N as written before.
  EXPECT_EQ(job_info(job, cluster).output, launch.output);
  EXPECT_EQ(job_info(job, cluster).error, launch.error);
  job.allocation.clear();
  EXPECT_EQ(job_info(job, cluster).output, "/o/heat-42-%N-ada.42_4294967294.out");
  EXPECT_EQ(job_info(job, std::vector<std::string>{"n2"}).output, launch.output);
  job.spec.extra.edit().error.clear();
  EXPECT_FALSE(job_info(job, cluster).error) << "no -e: stderr goes with stdout";
}

// ---- job arrays (issue 18 item 1)
TEST(WireConvert, AnArrayTaskFillsAAndAItsLaunchAndItsInfo) {
  Cluster cluster;
  const NodeIndex n1 = cluster.add_node("n1");
  Job job;
  job.id = 45;
  job.spec = full_spec();
  job.spec.extra.edit().output = "/o/out-%A_%a.txt";
  job.spec.extra.edit().array = "3-9:2%2";
  job.spec.extra.edit().array_job_id = 42;
  job.spec.extra.edit().array_task_id = 9;
  job.spec.extra.edit().array_throttle = 2;
  job.allocation = {n1};
  const proto::JobLaunch launch = job_launch(job, cluster);
  EXPECT_EQ(launch.output, "/o/out-42_9.txt");
  ASSERT_TRUE(launch.array);
  EXPECT_EQ(launch.array->job_id, 42);
  EXPECT_EQ(launch.array->task_id, 9);
  EXPECT_EQ(launch.array->count, 4);
  EXPECT_EQ(launch.array->min, 3);
  EXPECT_EQ(launch.array->max, 9);
  EXPECT_EQ(launch.array->step, 2);
  const proto::JobInfo info = job_info(job, cluster);
  EXPECT_EQ(info.array_job_id, 42);
  EXPECT_EQ(info.array_task_id, 9);
  EXPECT_EQ(info.array, "3-9:2%2");

  // The submission's --array goes through; a job outside an array has none.
  const proto::JobSpecMsg wire = spec_to_wire(job.spec);
  EXPECT_EQ(wire.array, "3-9:2%2");
  JobSpec back;
  ASSERT_FALSE(spec_from_wire(wire, back));
  EXPECT_EQ(back.extra->array, "3-9:2%2");
  EXPECT_EQ(back.extra->array_job_id, 0) << "the engine numbers the tasks, not the client";
  job.spec.extra.edit().array_job_id = 0;
  EXPECT_FALSE(job_launch(job, cluster).array);
  EXPECT_FALSE(job_info(job, cluster).array_job_id);
}

TEST(WireConvert, ArgumentsAreBoundedAndUtf8) {
  proto::JobSpecMsg wire = spec_to_wire(full_spec());
  wire.args = std::vector<std::string>{"ok", "\xff"};
  EXPECT_EQ(check_spec_text(wire).value_or("").substr(0, 30), "job.args[1]: not valid UTF-8 (");
  wire.args = std::vector<std::string>(SpecTextLimits::kArgs + 1, "x");
  EXPECT_EQ(check_spec_text(wire), "job.args: 4097 arguments, over the limit of 4096");
}

TEST(WireConvert, NodeNamesAreBoundedAndUtf8) {
  proto::JobSpecMsg wire = spec_to_wire(full_spec());
  wire.exclude = std::vector<std::string>{"n1", "\xff"};
  EXPECT_EQ(check_spec_text(wire).value_or("").substr(0, 28), "job.exclude: not valid UTF-8");
  wire.exclude.reset();
  wire.nodelist = std::vector<std::string>(SpecTextLimits::kArgs + 1, "n");
  EXPECT_EQ(check_spec_text(wire), "job.nodelist: 4097 nodes, over the limit of 4096");
}

TEST(WireConvert, NegativeMemIsRefusedAndChangesNothing) {
  proto::JobSpecMsg wire = spec_to_wire(full_spec());
  wire.mem_bytes = -1;
  JobSpec out;
  out.name = "untouched";
  EXPECT_EQ(spec_from_wire(wire, out), "job.mem_bytes: must not be negative (got -1)");
  EXPECT_EQ(out.name, "untouched");
}

TEST(WireConvert, ABadBeginTimeIsRefusedAndAWaitingJobShowsWhy) {
  proto::JobSpecMsg wire = spec_to_wire(full_spec());
  wire.begin_time = -5;
  JobSpec out;
  out.name = "untouched";
  EXPECT_EQ(spec_from_wire(wire, out),
            "job.begin_time: must be a time, not negative (got -5.000000)");
  EXPECT_EQ(out.name, "untouched");

  Job job;
  job.id = 4;
  job.spec = full_spec();
  job.hold = HoldKind::User;
  Cluster cluster;
  proto::JobInfo info = job_info(job, cluster, 0);
  EXPECT_EQ(info.reason, "JobHeldUser") << "not Resources: it is not offered at all";
  EXPECT_EQ(info.dependency, "afterok:1?afternotok:1");
  EXPECT_EQ(info.begin_time, 1795514400);
  job.hold = HoldKind::None;
  job.dependency = DependencyState::Never;
  EXPECT_EQ(job_info(job, cluster, 3).reason, "DependencyNeverSatisfied");
  job.dependency = DependencyState::Satisfied;
  job.before_begin = true;
  EXPECT_EQ(job_info(job, cluster, 3).reason, "BeginTime");
  job.before_begin = false;
  EXPECT_EQ(job_info(job, cluster, 3).reason, "Priority");
}

TEST(WireConvert, ASignalledJobWithoutWordsIsShownAsKilledBySignal) {
  Cluster cluster;
  Job job;
  job.id = 5;
  job.spec = full_spec();
  job.state = JobState::Failed;
  job.exit_status = -9;
  EXPECT_EQ(job_info(job, cluster).reason, "killed by signal 9 (SIGKILL)");
  job.run.edit().end_reason = "out of memory";
  EXPECT_EQ(job_info(job, cluster).reason, "out of memory") << "the node's words win";
  job.run.edit().end_reason.clear();
  job.state = JobState::Cancelled;
  EXPECT_EQ(job_info(job, cluster).reason, "") << "a cancel needs no reason";
}

TEST(WireConvert, AnEndedJobsInfoHasItsReasonAndUsage) {
  Cluster cluster;
  const NodeIndex n1 = cluster.add_node("n1");
  Job job;
  job.id = 4;
  job.spec = full_spec();
  job.state = JobState::Failed;
  job.start_time = 10;
  job.end_time = 20;
  job.exit_status = -9;
  job.allocation = {n1};
  job.run.edit().end_reason = "out of memory";
  job.run.edit().max_rss_bytes = std::uint64_t{32} << 20;
  job.run.edit().cpu_s = 1.5;
  const proto::JobInfo info = job_info(job, cluster);
  EXPECT_EQ(info.reason, "out of memory");
  EXPECT_EQ(info.max_rss_bytes, std::int64_t{32} << 20);
  EXPECT_EQ(info.cpu_s, 1.5);
  EXPECT_EQ(info.mem_bytes, std::int64_t{3} << 30);
}

TEST(WireConvert, JobInfoNamesTheNodes) {
  Cluster cluster;
  const NodeIndex n1 = cluster.add_node("n1");
  const NodeIndex n2 = cluster.add_node("n2");
  Job job;
  job.id = 3;
  job.spec = full_spec();
  job.state = JobState::Running;
  job.start_time = 10;
  job.allocation = {n2, n1};
  const proto::JobInfo info = job_info(job, cluster);
  EXPECT_EQ(info.state, "RUNNING");
  EXPECT_EQ(info.kind, "malleable");
  EXPECT_EQ(info.nodes, 2);
  EXPECT_EQ(info.req_nodes, 4);
  EXPECT_EQ(info.nodelist, (std::vector<std::string>{"n2", "n1"}));
  EXPECT_EQ(info.output, "/home/ada/run/heat.log");
}

TEST(ParamText, IsReadBackByParseParam) {
  // 1e-7 was once written "0.000000", and 2.0 read back as an integer.
  for (const ParamValue& value :
       {ParamValue{true}, ParamValue{false}, ParamValue{42LL}, ParamValue{0.5}, ParamValue{1e-7},
        ParamValue{2.0}, ParamValue{1.0 / 3}, ParamValue{std::string("fast")}}) {
    const auto parsed = parse_param("key=" + param_text(value));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->second, value) << param_text(value);
  }
  EXPECT_EQ(param_text(ParamValue{true}), "true");
  EXPECT_EQ(param_text(ParamValue{3LL}), "3");
}

}  // namespace
}  // namespace sched::convert

namespace sched::convert {
namespace {

TEST(WireConvert, TextFieldsAreUtf8AndBoundedOrRefusedByName) {
  const proto::JobSpecMsg good = spec_to_wire(full_spec());
  EXPECT_EQ(check_spec_text(good), std::nullopt);
  const auto refused = [&](auto change) {
    proto::JobSpecMsg wire = good;
    change(wire);
    JobSpec out;
    out.name = "untouched";
    auto error = spec_from_wire(wire, out);
    if (error) {
      EXPECT_EQ(out.name, "untouched");
    }
    return error.value_or("accepted");
  };
  EXPECT_EQ(refused([](auto& w) { w.name = "caf\xe9"; }), "job.name: not valid UTF-8 ('caf\\xE9')");
  EXPECT_EQ(refused([](auto& w) { w.user.assign(65, 'u'); }),
            "job.user: 65 bytes, over the limit of 64");
  EXPECT_EQ(refused([](auto& w) { w.script.assign((1 << 20) + 1, 's'); }),
            "job.script: 1048577 bytes, over the limit of 1048576");
  EXPECT_EQ(refused([](auto& w) { w.workdir = std::string("/tmp/a\0b", 8); }),
            "job.workdir: holds a NUL byte ('/tmp/a\\x00b')");
  EXPECT_EQ(refused([](auto& w) { w.output = std::string(5000, 'o'); }),
            "job.output: 5000 bytes, over the limit of 4096");
  EXPECT_EQ(refused([](auto& w) { w.env["A=B"] = "x"; }),
            "job.env: 'A=B' is not a variable name (empty or with '=')");
  EXPECT_EQ(refused([](auto& w) { w.env["BIG"] = std::string((128 << 10) + 1, 'v'); }),
            "job.env.BIG: 131073 bytes, over the limit of 131072");
  EXPECT_NE(refused([](auto& w) {
              for (int i = 0; i < 10; ++i)
                w.env["V" + std::to_string(i)] = std::string(120 << 10, 'v');
            }).find("bytes in all, over the limit of 1048576"),
            std::string::npos);
  // A very long unknown kind is echoed as an excerpt.
  EXPECT_LT(refused([](auto& w) { w.kind.assign(100000, 'k'); }).size(), 200u);
  // The script may hold NUL bytes and any UTF-8.
  EXPECT_EQ(refused([](auto& w) { w.script = std::string("#!/bin/sh\necho \xc3\xa9\0", 19); }),
            "accepted");
}

}  // namespace
}  // namespace sched::convert
