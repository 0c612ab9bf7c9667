// The daemon's enactor: accepted decisions become messages to node agents
// (job.launch to the leader's agent, job.kill to every agent of the job,
// resizes through the adaptation protocol of adaptations.hpp). Results come
// back later as agent messages, which the daemon turns into engine inputs.
// Results known without an agent's answer (no agent for the leader, a
// resize with no step to adapt, an adaptation rolled back) are queued in a
// DeferredResults (sched/driver.hpp) that the daemon feeds to the engine
// after the engine call returns: the engine is never re-entered.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "adaptations.hpp"
#include "agent_directory.hpp"
#include "sched/driver.hpp"
#include "sched/enactor.hpp"
#include "sched/engine.hpp"

namespace sched::daemon {

class LiveEnactor : public Enactor {
 public:
  LiveEnactor(AgentDirectory& agents, StepTable& steps, double kill_grace_s, double kill_timeout_s);
  // The engine whose decisions this enacts (it is built with the enactor).
  void attach(Engine& engine) { engine_ = &engine; }

  void start(const Job& job) override;
  void resize(const Job& job, const Resize& resize) override;
  void stop(const Job& job, StopReason reason) override;
  void request_perf(const Job& job) override;
  // job.suspend / job.resume to every agent of the job (its own node list).
  void suspend(const Job& job) override;
  void resume(const Job& job) override;

  Adaptations& adaptations() { return adaptations_; }

  // Results known without an agent's answer, for the daemon to feed.
  DeferredResults& results() { return results_; }
  // Jobs killed whose agents never reported the end: after kill_timeout_s
  // they end anyway (status -9), so that no job stays COMPLETING forever.
  std::vector<JobId> overdue_kills(double now);
  void forget_kill(JobId job) { kills_.erase(job); }

 private:
  AgentDirectory& agents_;
  Engine* engine_ = nullptr;
  double kill_grace_s_;
  double kill_timeout_s_;
  DeferredResults results_;
  Adaptations adaptations_;
  std::map<JobId, double> kills_;  // job → when its kill is overdue
};

}  // namespace sched::daemon
