// What a driver of the engine (the live daemon, the simulator) does around
// it, written once. An enactor is called from inside the engine (a pass, a
// job's end releasing nodes, ...) and must not call back into it; results it
// knows at once (a launch it knows failed, an adaptation rolled back, a
// simulated start) are queued in a DeferredResults and fed to the engine at
// a safe point, between engine calls. settle() then runs the engine to rest
// at the current instant: results first, then the pass they make due, again
// until neither happens.
//
// Time limits are the engine's (Engine::expire_time_limits); a driver only
// says when to look.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

namespace sched {

class Engine;

class DeferredResults {
 public:
  // One engine input, e.g. [id](Engine& e) { e.job_started(id); }. Small
  // captures (an id and a flag, or `this` and an id) fit in the function's
  // small-object buffer in the usual standard libraries, so the simulator's
  // many results allocate nothing once the queue has grown.
  using Result = std::function<void(Engine&)>;

  void push(Result result) { queue_.push_back(std::move(result)); }
  bool empty() const { return queue_.empty(); }
  std::size_t size() const { return queue_.size(); }

  // Feeds the results queued so far to `engine`, oldest first. Results that
  // these inputs cause to be queued wait for the next call, so that one call
  // is one round. Returns whether any was fed. Never call it from an enactor
  // (inside an engine call); a call from inside a result feeds nothing.
  bool feed(Engine& engine);

 private:
  std::vector<Result> queue_;
  std::vector<Result> feeding_;  // the round being fed; kept for its capacity
  bool in_feed_ = false;
};

// Feeds results, then runs a pass if one is due, until neither happens in a
// round. A policy that keeps acting without time passing is a bug, not a
// reason to hang: after `max_rounds` rounds it logs "<who>: passes kept
// acting ... ; moving on" and returns false (true once settled). Whatever is
// left waits for the driver's next settle.
bool settle(Engine& engine, DeferredResults& results, int max_rounds, std::string_view who);

}  // namespace sched
