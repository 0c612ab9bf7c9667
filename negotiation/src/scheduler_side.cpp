#include "sched/negotiation/scheduler_side.hpp"

namespace sched::negotiation {

namespace {
namespace type = proto::type;
namespace code = proto::code;
namespace nego_code = proto::nego_code;
namespace outcome = proto::nego_outcome;
}  // namespace

void SchedulerSide::init(const Params& wanted, std::string_view name, double now) {
  if (state_ != State::Uninitialised) {
    throw NegotiationError(nego_code::kOutOfOrder, "PROTOCOL_INIT: the session is not closed");
  }
  if (wanted.max_attempts < 1 || wanted.timeout_s <= 0 || wanted.status_interval_s < 0) {
    throw NegotiationError(code::kInvalid,
                           "PROTOCOL_INIT: max_attempts ≥ 1, timeout_s > 0, status_interval_s ≥ 0");
  }
  proto::NegoInit init;
  init.max_attempts = wanted.max_attempts;
  init.timeout_s = wanted.timeout_s;
  init.status_interval_s = wanted.status_interval_s;
  init.name = std::string(name);
  send(type::kNegoInit, init);
  params_ = wanted;
  state_ = State::Initialising;
  (void)now;
}

void SchedulerSide::request_offer(std::int64_t pending, double now) {
  require_ready("REQUEST_RESOURCE_OFFER");
  if (pending < 1) throw NegotiationError(code::kInvalid, "REQUEST_RESOURCE_OFFER: no job waits");
  if (interested_) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "REQUEST_RESOURCE_OFFER: offers were already asked for");
  }
  send(type::kNegoRequestOffer, proto::NegoRequestOffer{pending});
  interested_ = true;
  (void)now;
}

void SchedulerSide::take_offer(double now) {
  require_ready("NEGOTIATION_START");
  if (phase_ != Phase::FirstOffer) {
    throw NegotiationError(nego_code::kOutOfOrder, "NEGOTIATION_START: no first offer is open");
  }
  send(type::kNegoStart, proto::NegoStart{txn_});
  set_phase(Phase::Starting, now);
}

void SchedulerSide::decline(std::string_view reason, double now) {
  require_ready("NEGOTIATION_END declined");
  if (phase_ != Phase::FirstOffer) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "declined: only a first offer not yet taken is declined");
  }
  interested_ = false;
  send_end(outcome::kDeclined, {}, reason, now);
}

void SchedulerSide::answer(bool accepted, std::vector<proto::NegoPlacement> mapping,
                           std::string_view reason, double now) {
  require_ready("RESPONSE_RESOURCE_OFFER");
  if (phase_ != Phase::OfferOpen || !open_offer_) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "RESPONSE_RESOURCE_OFFER: no offer is open for an answer");
  }
  if (!accepted && attempt_ >= params_.max_attempts) {
    throw NegotiationError(
        nego_code::kAttemptLimit,
        "offer " + std::to_string(attempt_) + " is the last attempt: it must be accepted");
  }
  if (!accepted && !mapping.empty()) {
    throw NegotiationError(code::kInvalid, "a rejected offer carries no mapping");
  }
  if (auto problem = check_mapping(*open_offer_, mapping)) {
    throw NegotiationError(code::kInvalid, *problem);
  }
  proto::NegoOfferResponse response;
  response.txn = txn_;
  response.attempt = attempt_;
  response.accepted = accepted;
  response.mapping = mapping;
  if (!reason.empty()) response.reason = std::string(reason);
  send(type::kNegoOfferResponse, response);
  last_answer_accepted_ = accepted;
  last_answer_mapping_ = std::move(mapping);
  set_phase(Phase::Judging, now);
}

void SchedulerSide::urgent(const proto::NegoUrgent& job, double now) {
  require_ready("URGENT_JOB");
  if (job.cores < 1 || job.nodes < 0) {
    throw NegotiationError(code::kInvalid, "URGENT_JOB: cores ≥ 1 and nodes ≥ 0");
  }
  if (urgent_pending_.contains(job.job)) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "URGENT_JOB: job " + std::to_string(job.job) + " is already asked for");
  }
  send(type::kNegoUrgent, job);
  urgent_pending_.insert(job.job);
  (void)now;
}

bool SchedulerSide::peer_may_send(std::string_view t) const {
  return t == type::kNegoInitResponse || t == type::kNegoFinalize ||
         t == type::kNegoFinalizeResponse || t == type::kNegoOffer ||
         t == type::kNegoStartResponse || t == type::kNegoEnd || t == type::kNegoEndResponse ||
         t == type::kNegoStatus || t == type::kNegoUrgentResponse;
}

bool SchedulerSide::waiting_for_peer() const {
  return phase_ == Phase::Starting || phase_ == Phase::Judging ||
         (phase_ == Phase::Ending && ending_by_me_);
}

bool SchedulerSide::handle(const proto::Envelope& envelope, double now) {
  const std::string& t = envelope.type;
  if (t == type::kNegoInitResponse) {
    auto response = envelope.body_as<proto::NegoInitResponse>();
    if (response.version != proto::kNegotiationVersion) {
      refuse(envelope, code::kBadVersion,
             "RESPONSE_PROTOCOL_INIT speaks version " + std::to_string(response.version));
      return true;
    }
    if (response.max_attempts < 1 || response.max_attempts > params_.max_attempts ||
        response.timeout_s <= 0 || response.timeout_s > params_.timeout_s ||
        response.status_interval_s < 0) {
      refuse(envelope, code::kInvalid,
             "RESPONSE_PROTOCOL_INIT: the agreed values must lie within those asked for");
      return true;
    }
    params_ = Params{response.max_attempts, response.timeout_s, response.status_interval_s};
    state_ = State::Ready;
    interested_ = false;
    last_txn_ = 0;
    Note n{Note::Kind::Initialised};
    n.params = params_;
    n.running = response.running;
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoOffer) {
    auto offer = envelope.body_as<proto::NegoOffer>();
    if (offer.attempt < 1 || offer.attempt > params_.max_attempts) {
      refuse(envelope, nego_code::kAttemptLimit,
             "offer attempt " + std::to_string(offer.attempt) + " is outside 1.." +
                 std::to_string(params_.max_attempts));
      return true;
    }
    if (offer.attempt == 1) {
      if (phase_ != Phase::None) {
        refuse(envelope, nego_code::kOutOfOrder,
               "a first offer while transaction " + std::to_string(txn_) + " is open");
        return true;
      }
      if (!interested_) {
        refuse(envelope, nego_code::kOutOfOrder, "an offer that was not asked for");
        return true;
      }
      if (offer.txn <= last_txn_) {
        refuse(envelope, nego_code::kUnknownTransaction,
               "transaction " + std::to_string(offer.txn) + " is not new");
        return true;
      }
      last_txn_ = offer.txn;
      open_transaction(offer.txn, now);
    } else {
      if (phase_ == Phase::None || offer.txn != txn_) {
        refuse(envelope, nego_code::kUnknownTransaction,
               "offer for transaction " + std::to_string(offer.txn) + ", which is not open");
        return true;
      }
      if (phase_ != Phase::Judging || offer.attempt != attempt_ + 1) {
        refuse(envelope, nego_code::kOutOfOrder,
               "offer " + std::to_string(offer.attempt) + " while offer " +
                   std::to_string(attempt_) + " is not yet answered");
        return true;
      }
      attempt_ = offer.attempt;
      set_phase(Phase::OfferOpen, now);
    }
    open_offer_ = offer.offer;
    Note n{Note::Kind::Offer, txn_};
    n.attempt = attempt_;
    n.last_attempt = attempt_ >= params_.max_attempts;
    n.offer = offer.offer;
    n.reason = offer.reason;
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoStartResponse) {
    auto response = envelope.body_as<proto::NegoStartResponse>();
    if (!check_txn(envelope, response.txn, std::nullopt)) return true;
    if (phase_ != Phase::Starting) {
      refuse(envelope, nego_code::kOutOfOrder, "RESPONSE_NEGOTIATION_START with none asked");
      return true;
    }
    if (response.accepted) {
      set_phase(Phase::OfferOpen, now);
      note(Note{Note::Kind::Started, txn_});
    } else {
      Note n{Note::Kind::StartRefused, txn_};
      n.reason = response.reason.value_or("");
      note(std::move(n));
      close_transaction({}, {});
    }
    return true;
  }
  if (t == type::kNegoStatus) {
    Note n{Note::Kind::Status};
    n.status = envelope.body_as<proto::NegoStatus>();
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoUrgentResponse) {
    auto response = envelope.body_as<proto::NegoUrgentResponse>();
    if (urgent_pending_.erase(response.job) == 0) {
      refuse(envelope, nego_code::kOutOfOrder,
             "RESPONSE_URGENT_JOB for job " + std::to_string(response.job) +
                 ", which was not asked for");
      return true;
    }
    Note n{Note::Kind::UrgentAnswer};
    n.urgent_answer = std::move(response);
    note(std::move(n));
    return true;
  }
  return false;
}

}  // namespace sched::negotiation
