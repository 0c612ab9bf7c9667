// A scheduling policy as the engine sees it. The Lua policy host is the one
// real implementation; tests may add C++ ones.
#pragma once

#include <optional>
#include <string>

#include "sched/policy_failure.hpp"

namespace sched {

class PassContext;
struct Event;

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // One scheduling pass: inspect ctx and call its actions. Returns why when
  // the pass failed, in which case the engine drops every action the pass
  // took and publishes policy.error.
  virtual std::optional<PolicyFailure> schedule(PassContext& ctx) = 0;
  // False when the policy's decisions depend only on the engine's state, not
  // on the time, so a tick that changed nothing cannot change them either.
  virtual bool time_dependent() const { return true; }
  // True when the policy acts only on idle nodes: with no node idle, a pass
  // after one of its own with nothing but submissions at the end of the
  // queue since changes nothing, so the engine skips it.
  virtual bool idle_nodes_only() const { return false; }
  // Lets the policy watch events between passes (Lua: P.on_event).
  virtual void on_event(const Event& /*event*/) {}
};

}  // namespace sched
