// One side of a negotiation session (docs/negotiation.md): what both the
// iScheduler's and the iHypervisor's state machines share. A side takes the
// peer's messages (on_message), its owner's decisions (the calls of
// SchedulerSide / HypervisorSide) and the time (tick); it answers with
// messages to send (take_outgoing) and notes of what happened for its owner
// (take_notes). No I/O and no clock of its own: the owner passes `now`.
//
// A peer's message that breaks the protocol is refused with an error reply
// and changes nothing. An owner's call that the protocol does not allow now
// throws NegotiationError and changes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sched/proto/envelope.hpp"
#include "sched/proto/negotiation_messages.hpp"

namespace sched::negotiation {

enum class Role { Scheduler, Hypervisor };

// The session's parameters (PROTOCOL_INIT and its response).
struct Params {
  int max_attempts = 3;
  double timeout_s = 10;
  double status_interval_s = 0;
};

// Where the open transaction is (docs/negotiation.md §5.3).
enum class Phase {
  None,        // no transaction open
  FirstOffer,  // H offered attempt 1: S's NEGOTIATION_START or declined end is due
  Starting,    // S sent NEGOTIATION_START: H's response is due
  OfferOpen,   // an offer is open: S's RESPONSE_RESOURCE_OFFER is due
  Judging,     // S answered: H's next offer or NEGOTIATION_END is due
  Ending,      // one side sent NEGOTIATION_END: the other's response is due
};

// What happened, for the owner. Fields beyond `kind` are set as the kind says.
struct Note {
  enum class Kind {
    Initialised,     // params, running (S: H's running jobs)
    InitRequested,   // H: S initialised the session (params agreed)
    OfferRequested,  // H: S has `pending` jobs and asks for offers
    Offer,           // S: offer `attempt` of `txn` (offer, reason, last_attempt)
    Started,         // H: S took transaction `txn` into negotiation
    StartRefused,    // S: H refused NEGOTIATION_START (reason); the transaction is closed
    Answer,          // H: S answered offer `attempt` (accepted, mapping, reason, last_attempt)
    Agreed,          // both: `mapping` of `txn` is agreed (S: the jobs are handed over;
                     //        H: start them now)
    Revoked,         // S: the agreement of `txn` timed out at H before S's answer reached
                     //    it: the jobs of `mapping` were not started and wait again
    Closed,          // both: `txn` ended without agreement (outcome, reason)
    Status,          // S: a STATUS_REPORT (status)
    Urgent,          // H: S asks to start `urgent` now
    UrgentAnswer,    // S: H's answer (urgent_answer)
    Finalized,       // both: the session is closed (reason)
    Refused,         // both: we refused a peer's message (message_type, code, reason)
    PeerRefused,     // both: the peer refused one of ours (message_type, code, reason)
  };
  explicit Note(Kind k, std::int64_t t = 0) : kind(k), txn(t) {}
  Kind kind;
  std::int64_t txn = 0;
  int attempt = 0;
  bool last_attempt = false;
  bool accepted = false;
  std::string outcome;
  std::string reason;
  std::string message_type;
  std::string code;
  std::int64_t pending = 0;
  Params params;
  std::vector<std::int64_t> running;
  std::optional<proto::NegoOfferSet> offer;
  std::vector<proto::NegoPlacement> mapping;
  std::optional<proto::NegoStatus> status;
  std::optional<proto::NegoUrgent> urgent;
  std::optional<proto::NegoUrgentResponse> urgent_answer;
};

// An owner's call the protocol does not allow now (code: the protocol's
// error code it would earn on the wire, e.g. out_of_order, attempt_limit).
class NegotiationError : public std::runtime_error {
 public:
  NegotiationError(std::string_view code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// The mapping's problem against `offer`, or nothing when it is valid
// (docs/negotiation.md §5.5).
std::optional<std::string> check_mapping(const proto::NegoOfferSet& offer,
                                         const std::vector<proto::NegoPlacement>& mapping);

class Session {
 public:
  Role role() const { return role_; }
  bool ready() const { return state_ == State::Ready; }
  // S has jobs and H may offer (§5.2).
  bool interested() const { return interested_; }
  // The offer of the open transaction, if one is open.
  const std::optional<proto::NegoOfferSet>& open_offer() const { return open_offer_; }
  Phase phase() const { return phase_; }
  std::int64_t txn() const { return txn_; }
  int attempt() const { return attempt_; }
  const Params& params() const { return params_; }

  // One message from the peer (an envelope's bytes).
  void on_message(std::string_view bytes, double now);
  // Timeouts (§5.6): abandons the open transaction when the peer is late.
  void tick(double now);
  // The peer's connection is gone: abandons the open transaction without a
  // message and ends the session (a new PROTOCOL_INIT opens another).
  void peer_gone();
  // Ends the session (PROTOCOL_FINALIZE); an open transaction is abandoned.
  void finalize(std::string_view reason, double now);
  // Abandons the open transaction (NEGOTIATION_END abandoned).
  void abandon(std::string_view reason, double now);

  std::vector<std::string> take_outgoing();
  std::vector<Note> take_notes();

 protected:
  enum class State { Uninitialised, Initialising, Ready, Finalizing };

  explicit Session(Role role) : role_(role) {}
  virtual ~Session() = default;

  // The role's own messages; return false for a type this role never receives.
  virtual bool handle(const proto::Envelope& envelope, double now) = 0;
  // Whether the peer's role may send `type` (else wrong_role).
  virtual bool peer_may_send(std::string_view type) const = 0;
  // Whether this side waits for the peer in the current phase.
  virtual bool waiting_for_peer() const = 0;

  template <class T>
  void send(std::string_view type, const T& body) {
    outgoing_.push_back(proto::encode_request(type, ++seq_, body));
  }
  void note(Note n) { notes_.push_back(std::move(n)); }
  // Refuses the peer's message: an error reply and a Refused note.
  void refuse(const proto::Envelope& envelope, std::string_view code, const std::string& why);
  // Throws NegotiationError unless the session is ready.
  void require_ready(std::string_view what) const;
  void open_transaction(std::int64_t txn, double now);
  void close_transaction(std::string_view outcome, std::string_view reason);
  void set_phase(Phase phase, double now);
  void send_end(std::string_view outcome, std::vector<proto::NegoPlacement> mapping,
                std::string_view reason, double now);
  // The common messages: NEGOTIATION_END and its response, PROTOCOL_FINALIZE
  // and its response. Returns false when `envelope` is none of them.
  bool handle_common(const proto::Envelope& envelope, double now);
  // Checks the txn (and attempt) of a transaction message; refuses it and
  // returns false when it is not the open transaction's.
  bool check_txn(const proto::Envelope& envelope, std::int64_t txn, std::optional<int> attempt);

  Role role_;
  State state_ = State::Uninitialised;
  Params params_;
  Phase phase_ = Phase::None;
  std::int64_t txn_ = 0;
  int attempt_ = 0;
  double deadline_ = 0;
  // The END this side sent and waits on: its outcome and mapping.
  std::string ending_outcome_;
  std::vector<proto::NegoPlacement> ending_mapping_;
  bool ending_by_me_ = false;
  // S's interest (§5.2), the open offer and S's last answer to it.
  bool interested_ = false;
  std::optional<proto::NegoOfferSet> open_offer_;
  bool last_answer_accepted_ = false;
  std::vector<proto::NegoPlacement> last_answer_mapping_;
  // Transactions this side closed while the peer may still answer its END
  // (timeouts, crossing ENDs): their response is taken without effect.
  std::set<std::int64_t> closed_awaiting_end_response_;
  // H: agreed transactions whose end went unanswered too long (their late
  // answer is refused). S: the last agreement answered, until H refuses the
  // answer (Revoked) or another agreement comes.
  std::set<std::int64_t> agreement_timed_out_;
  struct HandedOver {
    std::int64_t txn = 0;
    std::uint64_t seq = 0;  // of this side's RESPONSE_NEGOTIATION_END
    std::vector<proto::NegoPlacement> mapping;
  };
  std::optional<HandedOver> handed_over_;
  // PROTOCOL_FINALIZE this side sent: its reason; and whether the peer's
  // finalisation crossed it (its response to ours is then taken silently).
  std::string finalize_reason_;
  bool absorb_finalize_response_ = false;

 protected:
  std::uint64_t seq_ = 0;  // of the last message sent

 private:
  std::vector<std::string> outgoing_;
  std::vector<Note> notes_;
};

}  // namespace sched::negotiation
