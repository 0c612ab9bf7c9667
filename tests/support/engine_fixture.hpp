// Shared helpers for the engine-core unit tests: a recording fake Enactor, a
// C++ Policy scripted by a std::function, an EventSink that records events,
// and a fixture that wires them to an Engine on a ManualClock.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sched/cluster.hpp"
#include "sched/decision.hpp"
#include "sched/enactor.hpp"
#include "sched/engine.hpp"
#include "sched/env.hpp"
#include "sched/event.hpp"
#include "sched/job.hpp"
#include "sched/pass_context.hpp"
#include "sched/policy.hpp"
#include "sched/policy_failure.hpp"
#include "sched/status.hpp"

namespace sched::test {

// Stores every call the engine makes, with a copy of what it was given.
class RecordingEnactor : public Enactor {
 public:
  enum class Kind { Start, Resize, Stop, Perf, Suspend, Resume };
  struct Call {
    Kind kind = Kind::Start;
    JobId job = 0;
    JobState state = JobState::Pending;      // the job's state when called
    std::vector<NodeIndex> allocation;       // the job's allocation when called
    Resize resize;                           // Resize calls
    StopReason reason = StopReason::Cancel;  // Stop calls
  };

  void start(const Job& job) override { calls.push_back(make(Kind::Start, job)); }
  void resize(const Job& job, const Resize& resize) override {
    Call call = make(Kind::Resize, job);
    call.resize = resize;
    calls.push_back(std::move(call));
  }
  void stop(const Job& job, StopReason reason) override {
    Call call = make(Kind::Stop, job);
    call.reason = reason;
    calls.push_back(std::move(call));
  }
  void request_perf(const Job& job) override { calls.push_back(make(Kind::Perf, job)); }
  void suspend(const Job& job) override { calls.push_back(make(Kind::Suspend, job)); }
  void resume(const Job& job) override { calls.push_back(make(Kind::Resume, job)); }

  std::vector<Call> of(Kind kind) const {
    std::vector<Call> out;
    for (const Call& call : calls) {
      if (call.kind == kind) out.push_back(call);
    }
    return out;
  }
  int count(Kind kind, JobId job = 0) const {
    int n = 0;
    for (const Call& call : calls) {
      if (call.kind == kind && (job == 0 || call.job == job)) ++n;
    }
    return n;
  }
  void clear() { calls.clear(); }

  std::vector<Call> calls;

 private:
  static Call make(Kind kind, const Job& job) {
    Call call;
    call.kind = kind;
    call.job = job.id;
    call.state = job.state;
    call.allocation = job.allocation;
    return call;
  }
};

// A policy whose pass is a std::function, so a test can script its actions.
class ScriptedPolicy : public Policy {
 public:
  using Script = std::function<std::optional<std::string>(PassContext&)>;

  explicit ScriptedPolicy(Script script = {}, bool time_dependent = true)
      : script_(std::move(script)), time_dependent_(time_dependent) {}

  std::string name() const override { return "scripted"; }
  // A script's error message becomes a runtime failure, as a Lua error would.
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    ++passes;
    reasons.push_back(ctx.reason());
    if (!script_) return std::nullopt;
    auto error = script_(ctx);
    if (!error) return std::nullopt;
    return PolicyFailure::from_lua(PolicyFailureCode::Runtime, std::move(*error));
  }
  bool time_dependent() const override { return time_dependent_; }
  void on_event(const Event& event) override { seen.push_back(event); }

  void set_script(Script script) { script_ = std::move(script); }
  void set_time_dependent(bool on) { time_dependent_ = on; }

  int passes = 0;
  std::vector<PassReason> reasons;
  std::vector<Event> seen;  // events given to on_event

 private:
  Script script_;
  bool time_dependent_;
};

class EventRecorder : public EventSink {
 public:
  void on_event(const Event& event) override { events.push_back(event); }

  std::vector<Event> of_job(JobId id) const {
    std::vector<Event> out;
    for (const Event& event : events) {
      if (event.job == id) out.push_back(event);
    }
    return out;
  }
  std::vector<Event> of_type(EventType type) const {
    std::vector<Event> out;
    for (const Event& event : events) {
      if (event.type == type) out.push_back(event);
    }
    return out;
  }
  std::vector<EventType> types_of_job(JobId id) const {
    std::vector<EventType> out;
    for (const Event& event : of_job(id)) out.push_back(event.type);
    return out;
  }
  void clear() { events.clear(); }

  std::vector<Event> events;
};

inline JobSpec rigid_spec(int nodes, double walltime = 0) {
  JobSpec spec;
  spec.name = "rigid" + std::to_string(nodes);
  spec.user = "alice";
  spec.kind = JobKind::Rigid;
  spec.nodes = nodes;
  spec.walltime = walltime;
  return spec;
}

inline JobSpec malleable_spec(int nodes, int min_nodes, int max_nodes,
                              NodeConstraint constraint = NodeConstraint::None) {
  JobSpec spec;
  spec.name = "malleable" + std::to_string(nodes);
  spec.user = "bob";
  spec.kind = JobKind::Malleable;
  spec.nodes = nodes;
  spec.min_nodes = min_nodes;
  spec.max_nodes = max_nodes;
  spec.constraint = constraint;
  return spec;
}

inline JobSpec moldable_spec(int nodes, int min_nodes, int max_nodes) {
  JobSpec spec = malleable_spec(nodes, min_nodes, max_nodes);
  spec.name = "moldable" + std::to_string(nodes);
  spec.kind = JobKind::Moldable;
  return spec;
}

// An Engine on a ManualClock with a recording enactor, an event recorder and
// a scripted policy that does nothing unless a test gives it a script.
class EngineFixture : public ::testing::Test {
 protected:
  using Kind = RecordingEnactor::Kind;

  void init(int nodes, EngineConfig config = {}) {
    engine = std::make_unique<Engine>(clock, enactor, config);
    engine->add_sink(&events);
    policy = std::make_shared<ScriptedPolicy>();
    engine->set_policy(policy);
    for (int i = 0; i < nodes; ++i) engine->add_node("n" + std::to_string(i));
    events.clear();
    enactor.clear();
    pass_mark = calls_mark = 0;
  }

  // Runs one pass now whose body is `body`; the policy does nothing afterwards.
  void in_pass(const std::function<void(PassContext&)>& body,
               PassReason reason = PassReason::Manual) {
    policy->set_script([&body](PassContext& ctx) -> std::optional<std::string> {
      body(ctx);
      return std::nullopt;
    });
    pass_mark = events.events.size();
    calls_mark = enactor.calls.size();
    engine->run_pass(reason);
    policy->set_script({});
  }

  // Events and enactor calls of the last in_pass (and whatever came after).
  std::vector<Event> pass_events() const {
    return {events.events.begin() + static_cast<std::ptrdiff_t>(pass_mark), events.events.end()};
  }
  std::vector<RecordingEnactor::Call> pass_calls() const {
    return {enactor.calls.begin() + static_cast<std::ptrdiff_t>(calls_mark), enactor.calls.end()};
  }

  JobId submit(const JobSpec& spec) {
    auto out = engine->submit(spec);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : 0;
  }

  // Submits a job and runs it: a pass starts it, the enactor reports it up.
  JobId run_job(const JobSpec& spec) {
    const JobId id = submit(spec);
    in_pass([id](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });
    engine->job_started(id);
    EXPECT_EQ(state(id), JobState::Running);
    return id;
  }

  const Job& job(JobId id) const {
    const Job* found = engine->find_job(id);
    EXPECT_NE(found, nullptr) << "no job " << id;
    if (!found) throw std::runtime_error("no job");
    return *found;
  }
  JobState state(JobId id) const { return job(id).state; }

  int idle() const { return engine->cluster().idle_count(); }
  // Nodes held by some job (whether or not they are being released).
  int allocated() const {
    int n = 0;
    for (const Node& node : engine->cluster().nodes()) n += node.job != 0 ? 1 : 0;
    return n;
  }
  int promised() const {
    int n = 0;
    for (const Node& node : engine->cluster().nodes()) n += node.promised != 0 ? 1 : 0;
    return n;
  }
  int releasing() const {
    int n = 0;
    for (const Node& node : engine->cluster().nodes()) n += node.releasing ? 1 : 0;
    return n;
  }
  // No node is lost: every usable node is either idle or held by a job.
  void expect_nodes_conserved() const {
    int usable_free = 0;
    for (const Node& node : engine->cluster().nodes()) {
      if (node.job == 0 && node.up && !node.draining) ++usable_free;
    }
    EXPECT_EQ(idle(), usable_free);
    EXPECT_EQ(idle() + allocated(), engine->cluster().size())
        << "every node here is up, so idle + allocated must be the total";
  }

  ManualClock clock;
  RecordingEnactor enactor;
  EventRecorder events;
  std::shared_ptr<ScriptedPolicy> policy;
  std::unique_ptr<Engine> engine;
  std::size_t pass_mark = 0;
  std::size_t calls_mark = 0;
};

}  // namespace sched::test
