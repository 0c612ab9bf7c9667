// One scheduling pass's view of the engine: a read-only snapshot plus the
// tentative state the pass's accepted actions have built so far. Every
// action is checked at once against that tentative state (docs/design.md §4) and,
// when accepted, recorded; the engine enacts the record in call order after
// the policy returns, or drops it if the policy failed.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "sched/decision.hpp"
#include "sched/job.hpp"
#include "sched/pending_queue.hpp"

namespace sched {

class Engine;
class Cluster;

enum class PassReason { Tick, Submit, Completion, Adaptation, Request, Perf, Corridor, Manual };
std::string_view to_string(PassReason reason);

struct PowerView {
  double lower_w = 0;  // 0/0: no corridor
  double upper_w = 0;
  double current_w = 0;
  double idle_w_per_node = 0;
};

class PassContext {
 public:
  // dry: actions are checked but the pass will never be enacted (reload check).
  PassContext(Engine& engine, PassReason reason, bool dry);

  double now() const;
  PassReason reason() const { return reason_; }
  bool dry() const { return dry_; }
  int nodes_total() const;
  // Tentative: falls as the pass starts or grows jobs, rises as it shrinks
  // or preempts them.
  int nodes_idle() const { return idle_; }
  PowerView power() const;

  // Waiting jobs in priority order (urgent first, then arrival). Walked
  // lazily: a pass that looks at the first few jobs of a long queue pays for
  // those only. pending_at(i) is nullptr past the end.
  std::size_t pending_count() const;
  const Job* pending_at(std::size_t index);
  const std::vector<const Job*>& pending();  // the whole queue
  // Running jobs (RUNNING or ADAPTING) in start order. Built on first use.
  const std::vector<const Job*>& running();
  std::size_t running_count() const;

  const Job* job(JobId id) const;
  const Cluster& cluster() const;
  // The job's size as this pass has left it (for a pending job: 0).
  int tentative_size(const Job& job) const;

  Verdict start(JobId id, std::optional<int> nodes = std::nullopt);
  Verdict expand(JobId id, int to_nodes);
  Verdict shrink(JobId id, int to_nodes);
  Verdict request_perf(JobId id);
  Verdict preempt(JobId id, PreemptMode mode);
  Verdict reserve(JobId id, double time);

  const std::vector<Action>& actions() const { return actions_; }
  // Refusals seen in this pass, by code (for statistics).
  const std::vector<int>& refusal_counts() const { return refusal_counts_; }
  // The refusals themselves: kept in a dry pass only (sched policy check).
  const std::vector<Refusal>& refusals() const { return refusals_; }

 private:
  struct Mark {
    bool started = false;
    bool preempted = false;
    int resize_to = 0;  // 0: not resized in this pass
    int direction = 0;  // +1 expand, -1 shrink
  };

  Verdict refuse(RefusalCode code, JobId id, int want = 0, int have = 0, std::string detail = {});
  Verdict check_resize(const Job* job, JobId id, int to, int direction);

  Engine& engine_;
  PassReason reason_;
  bool dry_;
  int idle_;
  std::unordered_map<JobId, Mark> marks_;
  std::vector<Action> actions_;
  std::vector<int> refusal_counts_;
  std::vector<Refusal> refusals_;
  std::vector<const Job*> pending_;  // the part of the queue walked so far
  std::optional<PendingQueue::Cursor> pending_cursor_;
  bool pending_complete_ = false;
  std::optional<std::vector<const Job*>> running_;
  // Nodes given to placed jobs in this pass, by index; sized on first use.
  std::vector<bool> placed_;
};

}  // namespace sched
