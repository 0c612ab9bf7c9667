// The components that run each side of a negotiation (issue 20): the
// iHypervisor drives a HypervisorSide with its policy and its partition
// model (it starts agreed jobs, frees cores when they end, starts urgent
// jobs by suspending others); the iScheduler drives a SchedulerSide with its
// policy and its queue. Both speak only in encoded messages
// (receive/take_outgoing), as over the wire; the owner carries the bytes and
// the time (the simulator in one process, or a socket).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/invasive/partition.hpp"
#include "sched/invasive/policies.hpp"
#include "sched/negotiation/hypervisor_side.hpp"
#include "sched/negotiation/scheduler_side.hpp"

namespace sched::invasive {

// Messages carried, by type (read from each envelope).
struct MessageCounts {
  std::map<std::string, std::int64_t> by_type;
  std::int64_t total = 0;
  void add(const std::string& bytes);
};

// How transactions ended, from the iHypervisor's side.
struct NegotiationStats {
  std::int64_t transactions = 0;  // opened
  std::int64_t agreed = 0;        // ended agreed, with jobs in the mapping
  std::int64_t agreed_empty = 0;  // ended agreed with an empty mapping
  std::int64_t not_agreed = 0;    // declined or abandoned
  std::int64_t rejected_mappings = 0;
  // Mappings agreed at the attempt limit that the judge rejects (§5.4).
  std::int64_t forced_at_limit = 0;
  std::int64_t policy_errors = 0;
  std::int64_t refusals = 0;  // protocol errors either way (none expected)
  std::vector<int> rounds;    // offers per non-empty agreement
  std::optional<std::string> last_policy_error;
};

// A job the iHypervisor started or resumed (for its owner to run).
struct JobEvent {
  enum class Kind { Started, Resumed, Suspended } kind;
  std::int64_t job = 0;
  std::vector<proto::NegoPlacement> placement;
};

class HypervisorComponent {
 public:
  // `policy` null: no negotiation of its own — every offer is all free
  // cores, real, and every mapping is accepted as it is.
  HypervisorComponent(Partition& partition, HypervisorPolicy* policy,
                      negotiation::HypervisorLimits limits = {});

  void receive(const std::string& bytes, double now);
  // The partition changed (jobs ended): offers when the iScheduler waits.
  void changed(double now);
  // A job ended: its cores are free; suspended jobs whose cores are free
  // again resume. Call changed() once the instant's ends are in.
  void job_ended(std::int64_t job, double now);
  // Timeouts and status reports.
  void tick(double now);
  std::vector<std::string> take_outgoing();
  std::vector<JobEvent> take_job_events();
  // Whether an urgent job may suspend running ones (true by default). Off
  // when the owner cannot suspend (schedd's cores partitions, until the
  // engine can): an urgent job then starts on free cores or is refused.
  void set_suspend_allowed(bool allowed) { suspend_allowed_ = allowed; }

  negotiation::HypervisorSide& side() { return side_; }
  const negotiation::HypervisorSide& side() const { return side_; }
  const NegotiationStats& stats() const { return stats_; }

 private:
  void process(double now);
  void try_offer(std::string_view reason, double now);
  std::optional<proto::NegoOfferSet> build_offer(std::string_view reason, double now);
  void judge(const negotiation::Note& answer, double now);
  void start_agreed(const std::vector<proto::NegoPlacement>& mapping, double now);
  void urgent(const proto::NegoUrgent& request, double now);
  void policy_error(const std::string& error);
  HypervisorView view(std::string_view reason, int attempt, double now) const;

  Partition& partition_;
  HypervisorPolicy* policy_;
  negotiation::HypervisorSide side_;
  std::int64_t next_offer_id_ = 0;
  std::vector<std::vector<proto::NegoPlacement>> rejected_;  // in the open transaction
  int rejections_in_txn_ = 0;
  std::vector<proto::NegoUrgent> urgent_waiting_;  // until the agreement out is answered
  std::vector<JobEvent> job_events_;
  std::vector<std::string> outgoing_;
  NegotiationStats stats_;
  int attempt_agreed_ = 0;  // the attempt whose mapping was accepted
  std::int64_t finished_ = 0;
  double first_time_ = -1;
  bool suspend_allowed_ = true;
};

struct SchedulerStats {
  std::int64_t offers = 0;
  std::int64_t rejected_offers = 0;
  std::int64_t policy_errors = 0;
  std::int64_t declined = 0;
  std::int64_t reports = 0;
  std::optional<std::string> last_policy_error;
};

class SchedulerComponent {
 public:
  // `policy` must outlive the component.
  SchedulerComponent(SchedulerPolicy& policy, negotiation::Params wanted, std::string name);

  // PROTOCOL_INIT.
  void start(double now);
  // A job joins the queue (asks for offers when none were asked for).
  void submit(const PendingJob& job, double now);
  // URGENT_JOB: start it now on `cores` cores of one node.
  void urgent(const PendingJob& job, double now);
  void receive(const std::string& bytes, double now);
  void tick(double now);
  std::vector<std::string> take_outgoing();
  // The job left the owner's queue (cancelled, held, or its agreed start
  // was refused): forgotten wherever it waits here, so it is never mapped
  // again; the owner may submit it anew.
  void withdraw(std::int64_t job);
  // Whether the job is here: queued, asked as urgent, or handed to the
  // iHypervisor in an agreement it has not yet confirmed.
  bool holds(std::int64_t job) const;

  negotiation::SchedulerSide& side() { return side_; }
  const negotiation::SchedulerSide& side() const { return side_; }
  const std::vector<PendingJob>& pending() const { return pending_; }
  const SchedulerStats& stats() const { return stats_; }
  const std::optional<proto::NegoStatus>& last_report() const { return report_; }
  // Urgent jobs H refused: they wait in the queue like others.
  const std::vector<std::int64_t>& urgent_refused() const { return urgent_refused_; }

 private:
  void process(double now);
  void answer(const proto::NegoOfferSet& offer, int attempt, bool last, double now);
  std::optional<std::string> check(const std::vector<proto::NegoPlacement>& mapping) const;
  void ask_if_waiting(double now);

  SchedulerPolicy& policy_;
  negotiation::SchedulerSide side_;
  negotiation::Params wanted_;
  std::string name_;
  std::vector<PendingJob> pending_;
  std::map<std::int64_t, PendingJob> urgent_asked_;
  std::map<std::int64_t, PendingJob> handed_;  // to H, until it confirms them (Revoked)
  std::optional<proto::NegoOfferSet> offer_;   // the open offer, until answered
  int offer_attempt_ = 0;
  bool offer_last_ = false;
  std::optional<proto::NegoStatus> report_;
  std::vector<std::int64_t> urgent_refused_;
  SchedulerStats stats_;
};

}  // namespace sched::invasive
