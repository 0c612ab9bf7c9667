// The iScheduler's side of a negotiation session (docs/negotiation.md): the
// batch scheduler asks for offers when jobs wait, takes or declines each
// first offer, answers offers with mappings of its jobs, and hands the jobs
// of an agreed mapping over to the iHypervisor.
#pragma once

#include <set>

#include "sched/negotiation/session.hpp"

namespace sched::negotiation {

class SchedulerSide : public Session {
 public:
  SchedulerSide() : Session(Role::Scheduler) {}

  // PROTOCOL_INIT with the parameters this side wants; the agreed ones come
  // with the Initialised note.
  void init(const Params& wanted, std::string_view name, double now);
  // REQUEST_RESOURCE_OFFER: `pending` jobs wait (§5.2).
  void request_offer(std::int64_t pending, double now);
  // NEGOTIATION_START on the first offer of the open transaction.
  void take_offer(double now);
  // NEGOTIATION_END declined on the first offer: nothing to map.
  void decline(std::string_view reason, double now);
  // RESPONSE_RESOURCE_OFFER on the open offer: a mapping onto it (checked,
  // §5.5), or a rejection (not allowed on the last attempt, §5.4).
  void answer(bool accepted, std::vector<proto::NegoPlacement> mapping, std::string_view reason,
              double now);
  // URGENT_JOB (§5.7).
  void urgent(const proto::NegoUrgent& job, double now);

 private:
  bool handle(const proto::Envelope& envelope, double now) override;
  bool peer_may_send(std::string_view type) const override;
  bool waiting_for_peer() const override;

  std::int64_t last_txn_ = 0;
  std::set<std::int64_t> urgent_pending_;
};

}  // namespace sched::negotiation
