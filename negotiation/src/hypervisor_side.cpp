#include "sched/negotiation/hypervisor_side.hpp"

#include <algorithm>

namespace sched::negotiation {

namespace {
namespace type = proto::type;
namespace code = proto::code;
namespace nego_code = proto::nego_code;
namespace outcome = proto::nego_outcome;
}  // namespace

void HypervisorSide::offer(proto::NegoOfferSet offer, std::string_view reason, double now) {
  require_ready("RESOURCE_OFFER");
  if (!interested_) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "RESOURCE_OFFER: the iScheduler has not asked for offers");
  }
  if (phase_ != Phase::None) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "RESOURCE_OFFER: transaction " + std::to_string(txn_) + " is open");
  }
  open_transaction(++last_txn_, now);
  proto::NegoOffer message{txn_, 1, offer, std::string(reason)};
  send(type::kNegoOffer, message);
  open_offer_ = std::move(offer);
}

void HypervisorSide::reoffer(proto::NegoOfferSet offer, std::string_view reason, double now) {
  require_ready("RESOURCE_OFFER");
  if (phase_ != Phase::Judging) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "RESOURCE_OFFER: no answer of the iScheduler is being judged");
  }
  if (attempt_ >= params_.max_attempts) {
    throw NegotiationError(nego_code::kAttemptLimit,
                           "offer " + std::to_string(attempt_) +
                               " was the last attempt: its mapping must be accepted");
  }
  ++attempt_;
  proto::NegoOffer message{txn_, attempt_, offer, std::string(reason)};
  send(type::kNegoOffer, message);
  open_offer_ = std::move(offer);
  last_answer_accepted_ = false;
  last_answer_mapping_.clear();
  set_phase(Phase::OfferOpen, now);
}

void HypervisorSide::accept_mapping(double now) {
  require_ready("NEGOTIATION_END agreed");
  if (phase_ != Phase::Judging || !last_answer_accepted_) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "NEGOTIATION_END agreed: no mapping of the iScheduler is being judged");
  }
  send_end(outcome::kAgreed, last_answer_mapping_, {}, now);
}

void HypervisorSide::report(const proto::NegoStatus& status, double now) {
  require_ready("STATUS_REPORT");
  send(type::kNegoStatus, status);
  last_status_ = now;
}

bool HypervisorSide::status_due(double now) const {
  return state_ == State::Ready && params_.status_interval_s > 0 &&
         now - last_status_ >= params_.status_interval_s;
}

void HypervisorSide::answer_urgent(const proto::NegoUrgentResponse& answer, double now) {
  require_ready("RESPONSE_URGENT_JOB");
  if (!urgent_pending_.contains(answer.job)) {
    throw NegotiationError(
        nego_code::kOutOfOrder,
        "RESPONSE_URGENT_JOB: job " + std::to_string(answer.job) + " was not asked for");
  }
  send(type::kNegoUrgentResponse, answer);
  urgent_pending_.erase(answer.job);
  (void)now;
}

bool HypervisorSide::runs(std::int64_t job) const {
  return std::find(running_.begin(), running_.end(), job) != running_.end();
}

bool HypervisorSide::peer_may_send(std::string_view t) const {
  return t == type::kNegoInit || t == type::kNegoFinalize || t == type::kNegoFinalizeResponse ||
         t == type::kNegoRequestOffer || t == type::kNegoStart || t == type::kNegoOfferResponse ||
         t == type::kNegoEnd || t == type::kNegoEndResponse || t == type::kNegoUrgent;
}

bool HypervisorSide::waiting_for_peer() const {
  return phase_ == Phase::FirstOffer || phase_ == Phase::OfferOpen ||
         (phase_ == Phase::Ending && ending_by_me_);
}

bool HypervisorSide::handle(const proto::Envelope& envelope, double now) {
  const std::string& t = envelope.type;
  if (t == type::kNegoInit) {
    auto init = envelope.body_as<proto::NegoInit>();
    if (init.version != proto::kNegotiationVersion) {
      refuse(envelope, code::kBadVersion,
             "protocol version " + std::to_string(init.version) + " is not spoken here (only " +
                 std::to_string(proto::kNegotiationVersion) + ")");
      return true;
    }
    if (init.max_attempts < 1 || init.timeout_s <= 0 || init.status_interval_s < 0) {
      refuse(envelope, code::kInvalid,
             "PROTOCOL_INIT: max_attempts ≥ 1, timeout_s > 0, status_interval_s ≥ 0");
      return true;
    }
    if (state_ == State::Ready) {
      // The peer started over (a restart keeps its identity): what the old
      // session had open is abandoned as if the peer had gone.
      if (phase_ != Phase::None) close_transaction(outcome::kAbandoned, "peer initialised anew");
      closed_awaiting_end_response_.clear();
      agreement_timed_out_.clear();
    }
    params_.max_attempts = std::min(init.max_attempts, limits_.max_attempts);
    params_.timeout_s = std::min(init.timeout_s, limits_.max_timeout_s);
    params_.status_interval_s =
        init.status_interval_s == 0
            ? 0
            : std::max(init.status_interval_s, limits_.min_status_interval_s);
    proto::NegoInitResponse response;
    response.max_attempts = params_.max_attempts;
    response.timeout_s = params_.timeout_s;
    response.status_interval_s = params_.status_interval_s;
    response.running = running_;
    send(type::kNegoInitResponse, response);
    state_ = State::Ready;
    interested_ = false;
    last_status_ = now;
    urgent_pending_.clear();
    Note n{Note::Kind::InitRequested};
    n.params = params_;
    n.reason = init.name;
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoRequestOffer) {
    auto request = envelope.body_as<proto::NegoRequestOffer>();
    if (request.pending < 1) {
      refuse(envelope, code::kInvalid, "REQUEST_RESOURCE_OFFER with no job pending");
      return true;
    }
    if (interested_) {
      refuse(envelope, nego_code::kOutOfOrder,
             "REQUEST_RESOURCE_OFFER: offers were already asked for");
      return true;
    }
    interested_ = true;
    Note n{Note::Kind::OfferRequested};
    n.pending = request.pending;
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoStart) {
    auto start = envelope.body_as<proto::NegoStart>();
    if (!check_txn(envelope, start.txn, std::nullopt)) return true;
    if (phase_ != Phase::FirstOffer) {
      refuse(envelope, nego_code::kOutOfOrder,
             "NEGOTIATION_START: transaction " + std::to_string(txn_) + " is already started");
      return true;
    }
    // The offer stands: this side takes every start (a withdrawn offer would
    // answer accepted = false).
    send(type::kNegoStartResponse, proto::NegoStartResponse{txn_, true, std::nullopt});
    set_phase(Phase::OfferOpen, now);
    note(Note{Note::Kind::Started, txn_});
    return true;
  }
  if (t == type::kNegoOfferResponse) {
    auto response = envelope.body_as<proto::NegoOfferResponse>();
    if (!check_txn(envelope, response.txn, response.attempt)) return true;
    if (phase_ != Phase::OfferOpen) {
      refuse(envelope, nego_code::kOutOfOrder,
             phase_ == Phase::FirstOffer
                 ? "RESPONSE_RESOURCE_OFFER before NEGOTIATION_START"
                 : "RESPONSE_RESOURCE_OFFER: the offer is already answered");
      return true;
    }
    if (!response.accepted && attempt_ >= params_.max_attempts) {
      refuse(envelope, nego_code::kAttemptLimit,
             "offer " + std::to_string(attempt_) + " is the last attempt: it must be accepted");
      return true;
    }
    if (!response.accepted && !response.mapping.empty()) {
      refuse(envelope, code::kInvalid, "a rejected offer carries no mapping");
      return true;
    }
    if (auto problem = check_mapping(*open_offer_, response.mapping)) {
      refuse(envelope, code::kInvalid, *problem);
      return true;
    }
    for (const auto& placement : response.mapping) {
      if (runs(placement.job)) {
        refuse(envelope, code::kInvalid,
               "job " + std::to_string(placement.job) + " runs here already");
        return true;
      }
    }
    last_answer_accepted_ = response.accepted;
    last_answer_mapping_ = response.mapping;
    set_phase(Phase::Judging, now);
    Note n{Note::Kind::Answer, txn_};
    n.attempt = attempt_;
    n.last_attempt = attempt_ >= params_.max_attempts;
    n.accepted = response.accepted;
    n.mapping = std::move(response.mapping);
    n.reason = response.reason.value_or("");
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoUrgent) {
    auto urgent = envelope.body_as<proto::NegoUrgent>();
    if (urgent.cores < 1 || urgent.nodes < 0) {
      refuse(envelope, code::kInvalid, "URGENT_JOB: cores ≥ 1 and nodes ≥ 0");
      return true;
    }
    if (runs(urgent.job)) {
      refuse(envelope, code::kInvalid,
             "URGENT_JOB: job " + std::to_string(urgent.job) + " runs here already");
      return true;
    }
    if (!urgent_pending_.insert(urgent.job).second) {
      refuse(envelope, nego_code::kOutOfOrder,
             "URGENT_JOB: job " + std::to_string(urgent.job) + " is already being started");
      return true;
    }
    Note n{Note::Kind::Urgent};
    n.urgent = urgent;
    note(std::move(n));
    return true;
  }
  return false;
}

}  // namespace sched::negotiation
