#include "sched/negotiation/session.hpp"

#include <array>
#include <map>
#include <utility>

namespace sched::negotiation {

namespace {

namespace type = proto::type;
namespace code = proto::code;
namespace nego_code = proto::nego_code;
namespace outcome = proto::nego_outcome;

constexpr std::array kTypes = {
    type::kNegoInit,          type::kNegoInitResponse,
    type::kNegoFinalize,      type::kNegoFinalizeResponse,
    type::kNegoRequestOffer,  type::kNegoOffer,
    type::kNegoStart,         type::kNegoStartResponse,
    type::kNegoOfferResponse, type::kNegoEnd,
    type::kNegoEndResponse,   type::kNegoStatus,
    type::kNegoUrgent,        type::kNegoUrgentResponse,
};

bool known_type(std::string_view t) {
  for (auto k : kTypes) {
    if (k == t) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> check_mapping(const proto::NegoOfferSet& offer,
                                         const std::vector<proto::NegoPlacement>& mapping) {
  std::map<std::string, std::set<int>> offered;
  for (const auto& resource : offer.resources) {
    auto& cores = offered[resource.node];
    for (const auto& socket : resource.sockets)
      cores.insert(socket.cores.begin(), socket.cores.end());
  }
  std::map<std::string, std::set<int>> used;
  std::set<std::pair<std::int64_t, std::string>> job_nodes;
  for (const auto& p : mapping) {
    if (p.job <= 0) return "placement of job " + std::to_string(p.job) + ": job ids are positive";
    auto node = offered.find(p.node);
    if (node == offered.end()) {
      return "job " + std::to_string(p.job) + ": node " + p.node + " is not in offer " +
             std::to_string(offer.offer);
    }
    if (p.cores.empty()) return "job " + std::to_string(p.job) + " on " + p.node + ": no cores";
    if (!job_nodes.emplace(p.job, p.node).second) {
      return "job " + std::to_string(p.job) + " is placed twice on " + p.node;
    }
    for (int core : p.cores) {
      if (!node->second.contains(core)) {
        return "job " + std::to_string(p.job) + ": core " + std::to_string(core) + " of " + p.node +
               " is not in offer " + std::to_string(offer.offer);
      }
      if (!used[p.node].insert(core).second) {
        return "core " + std::to_string(core) + " of " + p.node + " is given twice";
      }
    }
  }
  return std::nullopt;
}

void Session::on_message(std::string_view bytes, double now) {
  proto::Envelope envelope;
  try {
    envelope = proto::decode(bytes.data(), bytes.size());
  } catch (const proto::ProtoError& e) {
    // As on every sched socket (docs/protocol.md §2): type "error", seq 0.
    outgoing_.push_back(proto::encode_error("error", 0, e.code(), e.what()));
    Note n = Note(Note::Kind::Refused);
    n.code = e.code();
    n.reason = e.what();
    note(std::move(n));
    return;
  }
  if (envelope.is_reply()) {
    // Every message is one-way: a reply is the peer refusing one of ours.
    Note n = Note(Note::Kind::PeerRefused);
    n.message_type = envelope.type;
    if (envelope.error) {
      n.code = envelope.error->code;
      n.reason = envelope.error->message;
    }
    note(std::move(n));
    if (handed_over_ && envelope.type == proto::type::kNegoEndResponse &&
        envelope.seq == handed_over_->seq) {
      // H timed out on its agreed end before this side's answer came: it
      // started nothing, so the jobs are this side's again (§5.6).
      Note revoked = Note(Note::Kind::Revoked, handed_over_->txn);
      revoked.mapping = std::move(handed_over_->mapping);
      revoked.reason = n.reason;
      note(std::move(revoked));
      handed_over_.reset();
    }
    return;
  }
  const std::string& t = envelope.type;
  if (!known_type(t)) return refuse(envelope, code::kUnknownType, "unknown message type " + t);
  if (!peer_may_send(t)) {
    return refuse(envelope, nego_code::kWrongRole,
                  t + " is not a message the " +
                      (role_ == Role::Scheduler ? "iHypervisor" : "iScheduler") + " sends");
  }
  switch (state_) {
    case State::Uninitialised:
      if (t == type::kNegoFinalizeResponse && absorb_finalize_response_) break;
      if (t != type::kNegoInit) {
        return refuse(envelope, nego_code::kNotInitialised,
                      t + " before the session is initialised (PROTOCOL_INIT first)");
      }
      break;
    case State::Initialising:
      if (t != type::kNegoInitResponse) {
        return refuse(envelope, nego_code::kNotInitialised,
                      t + " while PROTOCOL_INIT is unanswered");
      }
      break;
    case State::Ready:
      // A PROTOCOL_INIT in a ready session: the peer started over (§5.1).
      if (t == type::kNegoInitResponse) {
        return refuse(envelope, nego_code::kOutOfOrder, t + ": the session is already initialised");
      }
      break;
    case State::Finalizing:
      if (t != type::kNegoFinalize && t != type::kNegoFinalizeResponse) {
        return refuse(envelope, nego_code::kOutOfOrder,
                      t + " after PROTOCOL_FINALIZE: the session is ending");
      }
      break;
  }
  try {
    if (handle_common(envelope, now)) return;
    if (!handle(envelope, now)) refuse(envelope, code::kUnknownType, "unexpected " + t);
  } catch (const proto::ProtoError& e) {
    refuse(envelope, e.code(), e.what());
  }
}

void Session::refuse(const proto::Envelope& envelope, std::string_view error_code,
                     const std::string& why) {
  outgoing_.push_back(proto::encode_error(envelope.type, envelope.seq, error_code, why));
  Note n = Note(Note::Kind::Refused);
  n.message_type = envelope.type;
  n.code = error_code;
  n.reason = why;
  note(std::move(n));
}

void Session::require_ready(std::string_view what) const {
  if (state_ != State::Ready) {
    throw NegotiationError(nego_code::kNotInitialised,
                           std::string(what) + ": the session is not initialised");
  }
}

void Session::open_transaction(std::int64_t txn, double now) {
  txn_ = txn;
  attempt_ = 1;
  last_answer_accepted_ = false;
  last_answer_mapping_.clear();
  set_phase(Phase::FirstOffer, now);
}

void Session::set_phase(Phase phase, double now) {
  phase_ = phase;
  deadline_ = now + params_.timeout_s;
}

void Session::close_transaction(std::string_view how, std::string_view reason) {
  if (!how.empty()) {
    Note n = Note(Note::Kind::Closed, txn_);
    n.outcome = how;
    n.reason = reason;
    note(std::move(n));
  }
  phase_ = Phase::None;
  attempt_ = 0;
  open_offer_.reset();
  ending_outcome_.clear();
  ending_mapping_.clear();
  ending_by_me_ = false;
}

void Session::send_end(std::string_view how, std::vector<proto::NegoPlacement> mapping,
                       std::string_view reason, double now) {
  proto::NegoEnd end;
  end.txn = txn_;
  end.outcome = how;
  end.mapping = mapping;
  if (!reason.empty()) end.reason = std::string(reason);
  send(type::kNegoEnd, end);
  ending_outcome_ = how;
  ending_mapping_ = std::move(mapping);
  ending_by_me_ = true;
  set_phase(Phase::Ending, now);
}

bool Session::check_txn(const proto::Envelope& envelope, std::int64_t txn,
                        std::optional<int> attempt) {
  if (phase_ == Phase::None || txn != txn_) {
    refuse(envelope, nego_code::kUnknownTransaction,
           envelope.type + " for transaction " + std::to_string(txn) + ", which is not open");
    return false;
  }
  if (attempt && *attempt != attempt_) {
    refuse(envelope, nego_code::kUnknownTransaction,
           envelope.type + " for attempt " + std::to_string(*attempt) + " of transaction " +
               std::to_string(txn) + ", whose open attempt is " + std::to_string(attempt_));
    return false;
  }
  return true;
}

bool Session::handle_common(const proto::Envelope& envelope, double now) {
  const std::string& t = envelope.type;
  if (t == type::kNegoEnd) {
    auto end = envelope.body_as<proto::NegoEnd>();
    if (closed_awaiting_end_response_.contains(end.txn)) {  // never the open one
      // The peer ends what this side already closed (a timeout, a crossing
      // end): answer it, nothing else changes.
      send(type::kNegoEndResponse, proto::NegoEndResponse{end.txn});
      return true;
    }
    if (!check_txn(envelope, end.txn, std::nullopt)) return true;
    const bool from_hypervisor = role_ == Role::Scheduler;
    if (end.outcome == outcome::kAgreed) {
      if (!from_hypervisor) {
        refuse(envelope, code::kInvalid, "only the iHypervisor ends a transaction agreed");
        return true;
      }
      if (phase_ != Phase::Judging || !last_answer_accepted_) {
        refuse(envelope, nego_code::kOutOfOrder,
               "NEGOTIATION_END agreed while no accepted mapping is being judged");
        return true;
      }
      if (end.mapping != last_answer_mapping_) {
        refuse(envelope, code::kInvalid,
               "NEGOTIATION_END agreed with a mapping other than the one sent");
        return true;
      }
    } else if (end.outcome == outcome::kDeclined) {
      if (from_hypervisor) {
        refuse(envelope, code::kInvalid, "only the iScheduler declines an offer");
        return true;
      }
      if (phase_ != Phase::FirstOffer) {
        refuse(envelope, nego_code::kOutOfOrder, "an offer is declined only before it is taken");
        return true;
      }
    } else if (end.outcome != outcome::kAbandoned) {
      refuse(envelope, code::kInvalid,
             "unknown outcome '" + end.outcome + "' (agreed, declined or abandoned)");
      return true;
    }
    send(type::kNegoEndResponse, proto::NegoEndResponse{end.txn});
    if (phase_ == Phase::Ending && ending_by_me_) {
      // Both ended at once: no agreement; the peer's answer to ours follows.
      closed_awaiting_end_response_.insert(txn_);
      close_transaction(outcome::kAbandoned, end.reason.value_or("both sides ended"));
      return true;
    }
    if (end.outcome == outcome::kAgreed) {
      handed_over_ = HandedOver{txn_, seq_, end.mapping};
      Note n = Note(Note::Kind::Agreed, txn_);
      n.mapping = end.mapping;
      note(std::move(n));
      close_transaction({}, {});
    } else {
      if (end.outcome == outcome::kDeclined) interested_ = false;
      close_transaction(end.outcome, end.reason.value_or(""));
    }
    (void)now;
    return true;
  }
  if (t == type::kNegoEndResponse) {
    auto response = envelope.body_as<proto::NegoEndResponse>();
    if (agreement_timed_out_.erase(response.txn) > 0) {
      refuse(envelope, nego_code::kUnknownTransaction,
             "transaction " + std::to_string(response.txn) +
                 " timed out before its agreement was answered: nothing of it started");
      return true;
    }
    if (closed_awaiting_end_response_.erase(response.txn) > 0) return true;
    if (phase_ != Phase::Ending || !ending_by_me_ || response.txn != txn_) {
      refuse(envelope, nego_code::kOutOfOrder,
             "RESPONSE_NEGOTIATION_END for transaction " + std::to_string(response.txn) +
                 ", which this side did not end");
      return true;
    }
    if (ending_outcome_ == outcome::kAgreed) {
      Note n = Note(Note::Kind::Agreed, txn_);
      n.mapping = ending_mapping_;
      note(std::move(n));
      close_transaction({}, {});
    } else {
      close_transaction(ending_outcome_, "");
    }
    return true;
  }
  if (t == type::kNegoFinalize) {
    auto finalize = envelope.body_as<proto::NegoFinalize>();
    send(type::kNegoFinalizeResponse, proto::NegoEmpty{});
    if (state_ == State::Finalizing) {
      absorb_finalize_response_ = true;  // ours crossed theirs
    }
    if (phase_ != Phase::None) close_transaction(outcome::kAbandoned, "session finalized");
    state_ = State::Uninitialised;
    interested_ = false;
    closed_awaiting_end_response_.clear();
    Note n = Note(Note::Kind::Finalized);
    n.reason = finalize.reason;
    note(std::move(n));
    return true;
  }
  if (t == type::kNegoFinalizeResponse) {
    envelope.body_as<proto::NegoEmpty>();
    if (absorb_finalize_response_) {
      absorb_finalize_response_ = false;
      return true;
    }
    if (state_ != State::Finalizing) {
      refuse(envelope, nego_code::kOutOfOrder, "RESPONSE_PROTOCOL_FINALIZE with none sent");
      return true;
    }
    state_ = State::Uninitialised;
    Note n = Note(Note::Kind::Finalized);
    n.reason = finalize_reason_;
    note(std::move(n));
    return true;
  }
  return false;
}

void Session::tick(double now) {
  if (phase_ == Phase::None || !waiting_for_peer() || now < deadline_) return;
  if (phase_ == Phase::Ending && ending_outcome_ == outcome::kAgreed) {
    // Unanswered, the agreement is void: nothing starts, and a late answer is
    // refused so that the other side takes its jobs back (§5.6).
    agreement_timed_out_.insert(txn_);
    close_transaction(outcome::kAbandoned, "timeout: the agreement was not answered");
    return;
  }
  closed_awaiting_end_response_.insert(txn_);
  if (phase_ != Phase::Ending) {
    proto::NegoEnd end;
    end.txn = txn_;
    end.outcome = outcome::kAbandoned;
    end.reason = "timeout";
    send(type::kNegoEnd, end);
  }
  close_transaction(outcome::kAbandoned, "timeout");
}

void Session::peer_gone() {
  if (phase_ != Phase::None) close_transaction(outcome::kAbandoned, "peer gone");
  const bool was_open = state_ != State::Uninitialised;
  state_ = State::Uninitialised;
  interested_ = false;
  absorb_finalize_response_ = false;
  closed_awaiting_end_response_.clear();
  agreement_timed_out_.clear();
  handed_over_.reset();
  if (was_open) {
    Note n = Note(Note::Kind::Finalized);
    n.reason = "peer gone";
    note(std::move(n));
  }
}

void Session::finalize(std::string_view reason, double now) {
  require_ready("PROTOCOL_FINALIZE");
  send(type::kNegoFinalize, proto::NegoFinalize{std::string(reason)});
  if (phase_ != Phase::None) close_transaction(outcome::kAbandoned, "session finalized");
  finalize_reason_ = reason;
  state_ = State::Finalizing;
  (void)now;
}

void Session::abandon(std::string_view reason, double now) {
  require_ready("NEGOTIATION_END");
  if (phase_ == Phase::None) {
    throw NegotiationError(nego_code::kOutOfOrder, "no transaction is open to abandon");
  }
  if (phase_ == Phase::Ending && ending_by_me_) {
    throw NegotiationError(nego_code::kOutOfOrder,
                           "transaction " + std::to_string(txn_) + " is already ending");
  }
  send_end(outcome::kAbandoned, {}, reason, now);
}

std::vector<std::string> Session::take_outgoing() { return std::exchange(outgoing_, {}); }

std::vector<Note> Session::take_notes() { return std::exchange(notes_, {}); }

}  // namespace sched::negotiation
