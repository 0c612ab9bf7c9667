// The iHypervisor's side of a negotiation session (docs/negotiation.md): it
// agrees the session's parameters within its own limits, offers its
// partition's resources while the iScheduler is interested, judges each
// mapping (re-offering or agreeing), reports its status and answers urgent
// jobs. It starts the jobs of a mapping when the Agreed note comes.
#pragma once

#include <set>

#include "sched/negotiation/session.hpp"

namespace sched::negotiation {

// What this side accepts of a PROTOCOL_INIT.
struct HypervisorLimits {
  int max_attempts = 10;
  double max_timeout_s = 60;
  double min_status_interval_s = 1;
};

class HypervisorSide : public Session {
 public:
  explicit HypervisorSide(HypervisorLimits limits = {})
      : Session(Role::Hypervisor), limits_(limits) {}

  // The jobs this side runs (or has agreed to), kept current by the owner:
  // RESPONSE_PROTOCOL_INIT lists them (§6), and a mapping or URGENT_JOB
  // naming one is refused (none started twice).
  void set_running(std::vector<std::int64_t> jobs) { running_ = std::move(jobs); }
  // RESOURCE_OFFER opening a new transaction (S interested, none open).
  void offer(proto::NegoOfferSet offer, std::string_view reason, double now);
  // The next RESOURCE_OFFER of the open transaction, after S's answer
  // (not allowed on the last attempt: accept_mapping then, §5.4).
  void reoffer(proto::NegoOfferSet offer, std::string_view reason, double now);
  // NEGOTIATION_END agreed with S's last mapping.
  void accept_mapping(double now);
  // STATUS_REPORT; status_due says when the agreed interval has passed.
  void report(const proto::NegoStatus& status, double now);
  bool status_due(double now) const;
  // RESPONSE_URGENT_JOB for an URGENT_JOB received.
  void answer_urgent(const proto::NegoUrgentResponse& answer, double now);

 private:
  bool handle(const proto::Envelope& envelope, double now) override;
  bool peer_may_send(std::string_view type) const override;
  bool waiting_for_peer() const override;
  bool runs(std::int64_t job) const;

  HypervisorLimits limits_;
  std::vector<std::int64_t> running_;
  std::int64_t last_txn_ = 0;
  double last_status_ = 0;
  std::set<std::int64_t> urgent_pending_;
};

}  // namespace sched::negotiation
