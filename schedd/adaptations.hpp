// The engine's side of live adaptations (docs/design.md §6, docs/protocol.md §8).
// An expand or shrink the engine decided acts on the job's newest running
// step: adapt.begin tells every agent of the step (and of the nodes an
// expansion adds, which start the new processes) the process sets before and
// after; each agent answers adapt.ready once its processes are in their
// adaptation window, with their data endpoints; adapt.go opens the window
// everywhere with the whole endpoint table; adapt.complete from every agent
// ends it, and the engine records the new allocation (job.resized).
//
// Before the window opens an adaptation can be undone: a timeout, a lost
// node, an agent's adapt.failed roll it back (adapt.abort; the engine keeps
// the old allocation and gets its nodes back). Once it is open the processes
// are moving data and the only safe end is the job's: it fails. A job with
// no running step has nothing to adapt and is resized at once.
//
// A step run with --mall-spawn=mpi grows otherwise (docs/malleable.md "MPI
// adaptations"): adapt.begin carries no launch but the node of each window
// rank (`hosts`); the window opens when the old processes are in; the
// program then spawns the new ones with MPI_Comm_spawn, which schedd checks
// against the step's `expansion` (handlers/pmix.cpp) and starts on the
// added nodes as processes of this step; their commits end it as usual.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent_directory.hpp"
#include "sched/driver.hpp"
#include "sched/enactor.hpp"
#include "sched/engine.hpp"
#include "sched/proto/client_messages.hpp"  // step.resized
#include "step_table.hpp"

namespace sched::daemon {

using StepLayout = std::vector<std::pair<std::string, std::vector<int>>>;

// The process sets of one adaptation of a step laid out as `layout` (nodes
// with their ranks). Expand: every added node gets as many processes as the
// step's first node has, ranked after the old ones. Shrink: the processes on
// the removed nodes leave; the others close up in rank order. Indexed by
// window rank (the larger set): old_ranks[w] -1 = new, new_ranks[w] -1 =
// leaving.
struct WindowPlan {
  int old_size = 0;
  int new_size = 0;
  std::vector<int> old_ranks;
  std::vector<int> new_ranks;
  StepLayout layout;                  // after
  std::vector<std::string> involved;  // nodes with a process before or after
};
WindowPlan plan_window(const StepLayout& layout, Resize::Op op,
                       const std::vector<std::string>& changed);

// A resize by cores of a job of an invasive partition (issue 20 item 2):
// its cores by node name before and after, and their counts.
struct CoreChange {
  bool expand = false;
  std::map<std::string, std::vector<int>> before;
  std::map<std::string, std::vector<int>> after;
  int old_cores = 0;
  int new_cores = 0;
};

class Adaptations {
 public:
  // `notify_client(peer, resized)` tells a step's `sched run` its new size.
  using ClientNotice = std::function<void(const std::string&, const proto::StepResized&)>;
  Adaptations(AgentDirectory& agents, StepTable& steps, DeferredResults& results)
      : agents_(agents), steps_(steps), results_(results) {}
  void set_client_notice(ClientNotice notice) { notify_client_ = std::move(notice); }
  void set_timeout(double seconds) { timeout_s_ = seconds; }

  // Step 1: the engine's resize of `job`, whose nodes are `job_nodes`;
  // `changed` names the nodes the resize adds or removes.
  // `cores`: a resize by cores. The agents are told the new cores
  // (job.run->cores) before adapt.begin when it grows, once it is done when it
  // shrinks, and the old ones again when a growth is rolled back; the window
  // runs even when no process joins or leaves, so that the processes learn
  // their new cores (adapt.begin's core_ids).
  void begin(const Job& job, const Resize& resize, const std::vector<std::string>& job_nodes,
             const std::vector<std::string>& changed, double now,
             std::optional<CoreChange> cores = std::nullopt);

  // Agents' answers. Each returns an error for people when the message does
  // not fit the adaptation under way (it is then ignored).
  std::optional<std::string> on_ready(const proto::AdaptReady& ready);
  std::optional<std::string> on_complete(const proto::AdaptReport& report);
  std::optional<std::string> on_failed(const proto::AdaptReport& report);

  // A node's agent is gone: adaptations it takes part in end (rolled back,
  // or the job fails). Call before the engine hears that the node is down.
  void node_lost(const std::string& node);
  // The job is being stopped or has ended: its adaptation is withdrawn.
  // Returns the nodes it was adding, whose new processes must be killed too.
  std::vector<std::string> withdraw(JobId job, const std::string& reason);
  // Adaptations past their deadline end.
  void expire(double now);

  bool under_way(JobId job) const { return live_.count(job) > 0; }

 private:
  struct Live {
    proto::AdaptBegin begin;            // as sent (without a launch)
    std::vector<std::string> involved;  // the agents taking part
    std::vector<std::string> added;     // expand: nodes that join
    std::set<std::string> ready;
    std::set<std::string> complete;
    std::vector<std::string> endpoints;  // by window rank
    bool open = false;                   // adapt.go sent
    double deadline = 0;
    StepLayout layout;       // the step's, after the adaptation
    bool mpi_spawn = false;  // an expansion whose new processes the program spawns
  };

  Live* find(JobId job, std::uint64_t adaptation, const std::string& node,
             std::optional<std::string>& error);
  // Ends an adaptation without a resize: rolled back before its window
  // opened, or the job fails.
  void end(JobId job, const std::string& why);
  void done(JobId job, bool ok);
  // withdraw() without forgetting a resize by cores (end() still reports it).
  std::vector<std::string> withdraw_live(JobId job, const std::string& reason);
  void send_cores(JobId job, const std::map<std::string, std::vector<int>>& cores);

  AgentDirectory& agents_;
  StepTable& steps_;
  DeferredResults& results_;
  double timeout_s_ = 20;
  std::uint64_t last_id_ = 0;
  std::map<JobId, Live> live_;
  std::map<JobId, CoreChange> core_changes_;  // resizes by cores, until done
  ClientNotice notify_client_;
};

}  // namespace sched::daemon
