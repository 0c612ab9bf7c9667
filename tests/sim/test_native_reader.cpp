#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sched/sim/native_reader.hpp"
#include "test_paths.hpp"

namespace sched::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string error_of(std::string_view text) {
  try {
    parse_native(text, "w.toml");
  } catch (const WorkloadError& error) {
    return error.what();
  }
  return "no error";
}

TEST(NativeReader, ReadsFullExample) {
  const std::string path = std::string(SCHED_TEST_DATA_DIR) + "/native_example.toml";
  const auto workload = read_native(path);
  EXPECT_EQ(workload.source, path);
  EXPECT_EQ(workload.nodes, 16);
  EXPECT_EQ(workload.cores_per_node, 2);
  EXPECT_EQ(workload.skipped, 0);

  // Sorted by (submit, id): 11 at 0, then 3 and 10 at 30.5.
  ASSERT_EQ(workload.jobs.size(), 3u);
  EXPECT_EQ(workload.jobs[0].id, 11);
  EXPECT_EQ(workload.jobs[1].id, 3);
  EXPECT_EQ(workload.jobs[2].id, 10);

  const auto& heat = workload.jobs[2];
  EXPECT_EQ(heat.submit, 30.5);
  EXPECT_EQ(heat.runtime, 600);
  EXPECT_EQ(heat.spec.name, "heat");
  EXPECT_EQ(heat.spec.user, "alice");
  EXPECT_EQ(heat.spec.kind, JobKind::Malleable);
  EXPECT_EQ(heat.spec.nodes, 4);
  EXPECT_EQ(heat.spec.min_nodes, 2);
  EXPECT_EQ(heat.spec.max_nodes, 8);
  EXPECT_EQ(heat.spec.constraint, NodeConstraint::Even);
  EXPECT_EQ(heat.spec.tasks_per_node, 2);
  EXPECT_EQ(heat.spec.walltime, 900);
  EXPECT_EQ(heat.spec.power_min_w, 100);
  EXPECT_EQ(heat.spec.power_max_w, 250.5);
  EXPECT_TRUE(heat.spec.urgent);
  EXPECT_EQ(heat.spec.command, "./heat --size 4096");
  EXPECT_EQ(heat.spec.workdir, "/scratch/alice");
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(heat.spec.extra->environment, (Env{{"HEAT_MODE", "fast"}, {"OMP_NUM_THREADS", "2"}}));

  const auto& moldable = workload.jobs[1];
  EXPECT_EQ(moldable.spec.kind, JobKind::Moldable);
  EXPECT_EQ(moldable.spec.min_nodes, 1);  // normalize_spec's default for moldable jobs
  EXPECT_EQ(moldable.spec.max_nodes, 6);
  EXPECT_EQ(moldable.runtime, 1.5);

  // Events sorted by time.
  ASSERT_EQ(workload.events.size(), 3u);
  EXPECT_EQ(workload.events[0].type, TimedEvent::Type::Corridor);
  EXPECT_EQ(workload.events[0].time, 100);
  EXPECT_EQ(workload.events[0].lower_w, 1700);
  EXPECT_EQ(workload.events[0].upper_w, 2500);
  EXPECT_EQ(workload.events[1].type, TimedEvent::Type::NodeDown);
  EXPECT_EQ(workload.events[1].time, 200);
  EXPECT_EQ(workload.events[1].node, "n0003");
  EXPECT_EQ(workload.events[2].type, TimedEvent::Type::NodeUp);
  EXPECT_EQ(workload.events[2].time, 400.5);
}

TEST(NativeReader, DrainAndResumeEvents) {
  const auto workload = parse_native(R"(
[[event]]
time = 5
type = "node_drain"
node = "n0002"
[[event]]
time = 9
type = "node_resume"
node = "n0002"
)",
                                     "w.toml");
  ASSERT_EQ(workload.events.size(), 2u);
  EXPECT_EQ(workload.events[0].type, TimedEvent::Type::NodeDrain);
  EXPECT_EQ(workload.events[0].node, "n0002");
  EXPECT_EQ(workload.events[1].type, TimedEvent::Type::NodeResume);
  EXPECT_EQ(workload.events[1].time, 9);
}

TEST(NativeReader, Defaults) {
  const auto workload = parse_native(R"(
[[job]]
submit = 5
runtime = 10
)",
                                     "w.toml");
  EXPECT_EQ(workload.source, "w.toml");
  EXPECT_EQ(workload.nodes, 0);  // no [cluster]: unknown
  EXPECT_EQ(workload.cores_per_node, 1);
  EXPECT_TRUE(workload.events.empty());
  ASSERT_EQ(workload.jobs.size(), 1u);
  const auto& job = workload.jobs[0];
  EXPECT_EQ(job.id, 1);
  EXPECT_EQ(job.spec.name, "job1");
  EXPECT_EQ(job.spec.user, "");
  EXPECT_EQ(job.spec.kind, JobKind::Rigid);
  EXPECT_EQ(job.spec.nodes, 1);
  EXPECT_EQ(job.spec.min_nodes, 1);
  EXPECT_EQ(job.spec.max_nodes, 1);
  EXPECT_EQ(job.spec.constraint, NodeConstraint::None);
  EXPECT_EQ(job.spec.tasks_per_node, 1);
  EXPECT_EQ(job.spec.walltime, 0);
  EXPECT_FALSE(job.spec.urgent);
  EXPECT_TRUE(job.spec.extra->environment.empty());
}

TEST(NativeReader, EmptyDocumentIsAnEmptyWorkload) {
  const auto workload = parse_native("", "empty.toml");
  EXPECT_TRUE(workload.jobs.empty());
  EXPECT_TRUE(workload.events.empty());
}

TEST(NativeReader, IdsFollowThePreviousOne) {
  const auto workload = parse_native(R"(
[[job]]
submit = 0
runtime = 1
[[job]]
id = 7
submit = 0
runtime = 1
[[job]]
submit = 0
runtime = 1
)",
                                     "w.toml");
  ASSERT_EQ(workload.jobs.size(), 3u);
  EXPECT_EQ(workload.jobs[0].id, 1);
  EXPECT_EQ(workload.jobs[1].id, 7);
  EXPECT_EQ(workload.jobs[2].id, 8);
}

TEST(NativeReader, RangeWithoutKindIsMalleableAndStartsLow) {
  const auto workload = parse_native(R"(
[[job]]
submit = 0
runtime = 1
min_nodes = 2
max_nodes = 8
)",
                                     "w.toml");
  const auto& spec = workload.jobs.at(0).spec;
  EXPECT_EQ(spec.kind, JobKind::Malleable);
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.min_nodes, 2);
  EXPECT_EQ(spec.max_nodes, 8);
}

TEST(NativeReader, IntegersAcceptedForFloats) {
  const auto workload = parse_native(R"(
[[job]]
submit = 3
runtime = 4
walltime = 5
power_max_w = 6
)",
                                     "w.toml");
  EXPECT_EQ(workload.jobs.at(0).submit, 3.0);
  EXPECT_EQ(workload.jobs.at(0).spec.walltime, 5.0);
}

TEST(NativeReader, InlineEnvironmentTable) {
  const auto workload = parse_native(R"(
[[job]]
submit = 0
runtime = 1
env = { A = "1" }
)",
                                     "w.toml");
  ASSERT_EQ(workload.jobs.at(0).spec.extra->environment.size(), 1u);
  EXPECT_EQ(workload.jobs.at(0).spec.extra->environment[0].first, "A");
}

TEST(NativeReader, SyntaxErrorHasLine) {
  EXPECT_THAT(error_of("[[job]]\nsubmit = \n"), StartsWith("w.toml:2: "));
}

TEST(NativeReader, UnknownKeysHaveLines) {
  EXPECT_THAT(error_of("jobs = 1\n"), StartsWith("w.toml:1: unknown key 'jobs'"));
  EXPECT_THAT(error_of("[cluster]\nnodes = 4\ncores = 2\n"),
              StartsWith("w.toml:3: unknown key 'cores' in [cluster]"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nwall = 5\n"),
              StartsWith("w.toml:4: unknown key 'wall' in [[job]]"));
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"corridor\"\nlower_w = 1\nupper_w = 2\n"
                       "node = \"n1\"\n"),
              StartsWith("w.toml:6: unknown key 'node' in a corridor event"));
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"node_up\"\nnode = \"n1\"\nupper_w = 2\n"),
              StartsWith("w.toml:5: unknown key 'upper_w' in a node_up event"));
}

TEST(NativeReader, WrongTypesHaveLines) {
  EXPECT_THAT(error_of("[[job]]\nsubmit = \"soon\"\nruntime = 1\n"),
              StartsWith("w.toml:2: submit must be a number, not a string"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nnodes = 2.5\n"),
              StartsWith("w.toml:4: nodes must be an integer, not a float"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nname = 3\n"),
              StartsWith("w.toml:4: name must be a string"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nurgent = \"yes\"\n"),
              StartsWith("w.toml:4: urgent must be true or false"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\n[job.env]\nX = 1\n"),
              StartsWith("w.toml:5: environment variable X must be a string"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nenv = \"X=1\"\n"),
              StartsWith("w.toml:4: env must be a table"));
  EXPECT_THAT(error_of("[job]\nsubmit = 0\n"), StartsWith("w.toml:1: job must be an array"));
  EXPECT_THAT(error_of("cluster = 4\n"), StartsWith("w.toml:1: cluster must be a table"));
  EXPECT_THAT(error_of("[cluster]\nnodes = \"32\"\n"),
              StartsWith("w.toml:2: nodes must be an integer"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nnodes = 99999999999\n"),
              StartsWith("w.toml:4: nodes is out of range"));
}

TEST(NativeReader, UnknownKindAndConstraintHaveLines) {
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nkind = \"stretchy\"\n"),
              StartsWith("w.toml:4: unknown kind 'stretchy'"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nconstraint = \"prime\"\n"),
              StartsWith("w.toml:4: unknown constraint 'prime'"));
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"reboot\"\n"),
              StartsWith("w.toml:3: unknown event type 'reboot'"));
}

TEST(NativeReader, DuplicateIdsHaveLines) {
  const auto message = error_of(R"([[job]]
id = 4
submit = 0
runtime = 1

[[job]]
id = 4
submit = 0
runtime = 1
)");
  EXPECT_THAT(message, StartsWith("w.toml:7: duplicate job id 4"));
  EXPECT_THAT(message, HasSubstr("line 1"));
  // A default id can collide too.
  EXPECT_THAT(error_of("[[job]]\nid = 2\nsubmit = 0\nruntime = 1\n"
                       "[[job]]\nid = 1\nsubmit = 0\nruntime = 1\n"
                       "[[job]]\nsubmit = 0\nruntime = 1\n"),
              StartsWith("w.toml:9: duplicate job id 2"));
}

TEST(NativeReader, TimesBeyondTheSimulatorsBoundHaveLines) {
  // A submit of 1e20 s once made `sched sim` loop forever (issue 15).
  EXPECT_THAT(error_of("[[job]]\nsubmit = 1e20\nruntime = 1\n"),
              StartsWith("w.toml:2: submit is beyond 1000000000 s"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 99999999999999999999.0\n"),
              StartsWith("w.toml:3: runtime is beyond 1000000000 s"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nwalltime = 1000000001\n"),
              StartsWith("w.toml:4: walltime is beyond 1000000000 s"));
  EXPECT_THAT(error_of("[[event]]\ntime = 2e9\ntype = \"node_down\"\nnode = \"n1\"\n"),
              StartsWith("w.toml:2: time is beyond 1000000000 s"));
  EXPECT_EQ(error_of("[cluster]\nnodes = 1\n[[job]]\nsubmit = 1e9\nruntime = 1e9\n"), "no error");
}

TEST(NativeReader, NegativeTimesHaveLines) {
  EXPECT_THAT(error_of("[[job]]\nsubmit = -1\nruntime = 1\n"),
              StartsWith("w.toml:2: submit must not be negative"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = -0.5\n"),
              StartsWith("w.toml:3: runtime must not be negative"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nwalltime = -5\n"),
              StartsWith("w.toml:4: walltime must not be negative"));
  EXPECT_THAT(error_of("[[event]]\ntime = -3\ntype = \"node_down\"\nnode = \"n1\"\n"),
              StartsWith("w.toml:2: time must not be negative"));
}

TEST(NativeReader, MissingRequiredFieldsNameTheTable) {
  EXPECT_THAT(error_of("\n[[job]]\nruntime = 1\n"), StartsWith("w.toml:2: job 1 has no submit"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 1\n"), StartsWith("w.toml:1: job 1 has no runtime"));
  EXPECT_THAT(error_of("[[event]]\ntime = 1\n"), StartsWith("w.toml:1: event has no type"));
  EXPECT_THAT(error_of("[[event]]\ntype = \"corridor\"\nlower_w = 1\nupper_w = 2\n"),
              StartsWith("w.toml:1: corridor event has no time"));
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"corridor\"\nlower_w = 1\n"),
              StartsWith("w.toml:1: corridor event has no upper_w"));
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"node_down\"\n"),
              StartsWith("w.toml:1: node_down event has no node"));
}

TEST(NativeReader, BadCorridorAndClusterValues) {
  EXPECT_THAT(error_of("[[event]]\ntime = 0\ntype = \"corridor\"\nlower_w = 5\nupper_w = 2\n"),
              StartsWith("w.toml:5: upper_w must not be below lower_w"));
  EXPECT_THAT(error_of("[cluster]\nnodes = 0\n"),
              StartsWith("w.toml:2: cluster nodes must be at least 1"));
  EXPECT_THAT(error_of("[[job]]\nid = 0\nsubmit = 0\nruntime = 1\n"),
              StartsWith("w.toml:2: id must be at least 1"));
}

TEST(NativeReader, SpecErrorsFromNormalizeHaveTheJobLine) {
  EXPECT_THAT(error_of("\n\n[[job]]\nsubmit = 0\nruntime = 1\nnodes = 0\n"),
              StartsWith("w.toml:3: job 1: nodes must be at least 1"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nkind = \"rigid\"\nnodes = 4\n"
                       "max_nodes = 8\n"),
              StartsWith("w.toml:1: job 1: a rigid job has min_nodes = max_nodes = nodes"));
  EXPECT_THAT(error_of("[[job]]\nsubmit = 0\nruntime = 1\nkind = \"malleable\"\nnodes = 3\n"
                       "min_nodes = 2\nmax_nodes = 8\nconstraint = \"pof2\"\n"),
              HasSubstr("breaks node constraint pof2"));
}

TEST(NativeReader, MissingFileIsNamed) {
  try {
    read_native("/nonexistent/w.toml");
    FAIL() << "expected WorkloadError";
  } catch (const WorkloadError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/w.toml"));
  }
}

}  // namespace
}  // namespace sched::sim

namespace sched::sim {
namespace {

TEST(NativeReaderModel, ReadsTheApplicationModel) {
  const Workload w = parse_native(R"(
[[job]]
submit = 0
runtime = 10
kind = "evolving"
min_nodes = 1
max_nodes = 8
speedup = "downey"
downey_a = 12
downey_sigma = 0.5
phases = [1, 1.5, 0.75]
adapt_start_s = 3
adapt_stop_s = 2
adapt_alpha_s = 0.1
adapt_beta_s = 4
[[job.request]]
at = 0.7
op = "shrink"
to = 2
[[job.request]]
at = 0.25
op = "expand"
by = 3
)",
                                  "w.toml");
  ASSERT_EQ(w.jobs.size(), 1u);
  const AppModel& m = w.jobs[0].model;
  EXPECT_EQ(m.speedup.kind, SpeedupModel::Kind::Downey);
  EXPECT_DOUBLE_EQ(m.speedup.downey_a, 12);
  EXPECT_DOUBLE_EQ(m.speedup.downey_sigma, 0.5);
  EXPECT_EQ(m.phases, (std::vector<double>{1, 1.5, 0.75}));
  EXPECT_DOUBLE_EQ(m.adaptation.start_s_per_node, 3);
  EXPECT_DOUBLE_EQ(m.adaptation.stop_s_per_node, 2);
  EXPECT_DOUBLE_EQ(m.adaptation.alpha_s, 0.1);
  EXPECT_DOUBLE_EQ(m.adaptation.beta_s, 4);
  ASSERT_EQ(m.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(m.requests[0].at_done, 0.25) << "in order of the work done";
  EXPECT_EQ(m.requests[0].op, ResizeRequest::Op::Expand);
  EXPECT_EQ(m.requests[0].by, 3);
  EXPECT_EQ(m.requests[1].op, ResizeRequest::Op::Shrink);
  EXPECT_EQ(m.requests[1].to, 2);
}

TEST(NativeReaderModel, DefaultsWhenNotGiven) {
  const Workload w = parse_native("[[job]]\nsubmit = 0\nruntime = 1\n", "w.toml");
  const AppModel& m = w.jobs[0].model;
  EXPECT_EQ(m.speedup.kind, SpeedupModel::Kind::Amdahl);
  EXPECT_DOUBLE_EQ(m.speedup.serial_fraction, 0.01);
  EXPECT_TRUE(m.phases.empty());
  EXPECT_TRUE(m.requests.empty());
}

TEST(NativeReaderModel, LinearSpeedupAndTheStepCost) {
  const Workload w = parse_native(
      "[[job]]\nsubmit = 0\nruntime = 1\nspeedup = \"linear\"\nadapt_model = \"step\"\n"
      "adapt_latency_shrink_s = 0.5\n"
      "[[job]]\nsubmit = 0\nruntime = 1\nadapt_model = \"per_node\"\nadapt_alpha_s = 1\n"
      "adapt_per_new_node_expand_s = 0.1\n",
      "w.toml");
  const AppModel& step = w.jobs[0].model;
  EXPECT_EQ(step.speedup.kind, SpeedupModel::Kind::Linear);
  EXPECT_DOUBLE_EQ(step.adaptation.latency_expand_s, AdaptationCost::step().latency_expand_s);
  EXPECT_DOUBLE_EQ(step.adaptation.latency_shrink_s, 0.5) << "a key changes the named set";
  EXPECT_DOUBLE_EQ(step.adaptation.start_s_per_node, 0);
  const AdaptationCost& mixed = w.jobs[1].model.adaptation;
  EXPECT_DOUBLE_EQ(mixed.start_s_per_node, 1);
  EXPECT_DOUBLE_EQ(mixed.alpha_s, 1);
  EXPECT_DOUBLE_EQ(mixed.per_new_node_expand_s, 0.1);
}

TEST(NativeReaderModel, BadModelValuesHaveLines) {
  const std::string job = "[[job]]\nsubmit = 0\nruntime = 1\n";
  EXPECT_THAT(error_of(job + "speedup = \"gustafson\"\n"),
              StartsWith("w.toml:4: unknown speedup model 'gustafson'"));
  EXPECT_THAT(error_of(job + "adapt_model = \"cheap\"\n"),
              StartsWith("w.toml:4: unknown adaptation cost model 'cheap'"));
  EXPECT_THAT(error_of(job + "adapt_latency_expand_s = -1\n"),
              StartsWith("w.toml:4: adapt_latency_expand_s must not be negative"));
  EXPECT_THAT(error_of(job + "serial_fraction = 1.5\n"),
              StartsWith("w.toml:4: serial_fraction must be in 0..1"));
  EXPECT_THAT(error_of(job + "phases = [1, -2]\n"), StartsWith("w.toml:4: phase factors"));
  EXPECT_THAT(error_of(job + "phases = []\n"), StartsWith("w.toml:4: phases must be"));
  EXPECT_THAT(error_of(job + "[[job.request]]\nat = 0.5\nop = \"expand\"\n"),
              StartsWith("w.toml:4: request needs one of 'by' or 'to'"));
  EXPECT_THAT(error_of(job + "[[job.request]]\nat = 1.5\nop = \"expand\"\nby = 1\n"),
              StartsWith("w.toml:5: at must be in 0..1"));
  EXPECT_THAT(error_of(job + "[[job.request]]\nat = 0.5\nop = \"grow\"\nby = 1\n"),
              HasSubstr("request op must be \"expand\" or \"shrink\""));
  EXPECT_THAT(error_of(job + "[[job.request]]\nat = 0.5\nop = \"expand\"\nby = 1\nwhen = 3\n"),
              StartsWith("w.toml:8: unknown key 'when' in [[job.request]]"));
}

}  // namespace
}  // namespace sched::sim
