// Two sides of a negotiation wired back to back in memory, and helpers to
// inject a peer's hand-written message and read the error it earned.
#pragma once

#include <msgpack.hpp>
#include <string>
#include <vector>

#include "sched/negotiation/hypervisor_side.hpp"
#include "sched/negotiation/scheduler_side.hpp"
#include "sched/proto/envelope.hpp"

namespace sched::negotiation::testing {

struct Pair {
  SchedulerSide s;
  HypervisorSide h;
  double now = 100;
  std::vector<Note> s_notes;
  std::vector<Note> h_notes;

  explicit Pair(HypervisorLimits limits = {}) : h(limits) {}

  // Delivers every message in flight, both ways, until none is left.
  void pump() {
    for (int round = 0; round < 100; ++round) {
      auto to_h = s.take_outgoing();
      auto to_s = h.take_outgoing();
      if (to_h.empty() && to_s.empty()) break;
      for (const auto& m : to_h) h.on_message(m, now);
      for (const auto& m : to_s) s.on_message(m, now);
    }
    collect();
  }
  void collect() {
    for (auto& n : s.take_notes()) s_notes.push_back(std::move(n));
    for (auto& n : h.take_notes()) h_notes.push_back(std::move(n));
  }
  void init(Params wanted = {}) {
    s.init(wanted, "test", now);
    pump();
  }
  // Initialised, S interested, H's first offer delivered.
  void first_offer(const proto::NegoOfferSet& offer, Params wanted = {}) {
    init(wanted);
    s.request_offer(3, now);
    pump();
    h.offer(offer, "requested", now);
    pump();
  }
};

inline const Note* last(const std::vector<Note>& notes, Note::Kind kind) {
  for (auto it = notes.rbegin(); it != notes.rend(); ++it) {
    if (it->kind == kind) return &*it;
  }
  return nullptr;
}

inline int count(const std::vector<Note>& notes, Note::Kind kind) {
  int n = 0;
  for (const auto& note : notes) n += note.kind == kind;
  return n;
}

// The error code of the one error reply in `out`, or "" when none.
inline std::string error_code(const std::vector<std::string>& out) {
  for (const auto& m : out) {
    auto envelope = proto::decode(m.data(), m.size());
    if (envelope.is_reply() && envelope.error) return envelope.error->code;
  }
  return "";
}

// Two nodes, two sockets of two cores each.
inline proto::NegoOfferSet two_nodes(std::int64_t id = 1) {
  proto::NegoOfferSet offer;
  offer.offer = id;
  for (const char* node : {"n1", "n2"}) {
    offer.resources.push_back({node, {{0, {0, 1}}, {1, {2, 3}}}});
  }
  return offer;
}

template <class T>
std::string message(std::string_view type, const T& body, std::uint64_t seq = 900) {
  return proto::encode_request(type, seq, body);
}

}  // namespace sched::negotiation::testing
