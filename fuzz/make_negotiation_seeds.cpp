// Writes the negotiation fuzz target's seeds (negotiation_script.hpp) into the
// folder named by its argument: scripts of owners' decisions that walk both
// sides through whole negotiations, and the transcript of one negotiation's
// real messages, so that mutations start from valid bytes deep in a
// transaction.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "negotiation_script.hpp"
#include "sched/negotiation/hypervisor_side.hpp"
#include "sched/negotiation/scheduler_side.hpp"

namespace {

using namespace sched;

constexpr std::uint8_t kPump = 6;
constexpr std::uint8_t decide(int which) { return static_cast<std::uint8_t>(which << 3 | 4); }
constexpr std::uint8_t kInit = decide(0), kRequest = decide(1), kTake = decide(2),
                       kAnswer = decide(3), kDecline = decide(4);
constexpr std::uint8_t kOffer = 2, kAccept = 3, kReoffer = 3 | 8;
constexpr std::uint8_t advance(int seconds) { return static_cast<std::uint8_t>(seconds << 3 | 5); }
constexpr std::uint8_t kPeersGone = 7, kFinalize = 1 << 3 | 7, kAbandon = 2 << 3 | 7;

std::string script(std::initializer_list<std::uint8_t> ops) {
  std::string s;
  for (auto op : ops) {
    fuzz::append_op(s, op);
    if (op != kPump) fuzz::append_op(s, kPump);
  }
  return s;
}

// The messages of one negotiation with a re-offer, as delivered.
std::string transcript() {
  negotiation::SchedulerSide s;
  negotiation::HypervisorSide h;
  std::string out;
  auto pump = [&] {
    for (int round = 0; round < 8; ++round) {
      auto to_h = s.take_outgoing();
      auto to_s = h.take_outgoing();
      if (to_h.empty() && to_s.empty()) return;
      for (const auto& m : to_h) {
        fuzz::append_message(out, false, m);
        h.on_message(m, 0);
      }
      for (const auto& m : to_s) {
        fuzz::append_message(out, true, m);
        s.on_message(m, 0);
      }
    }
  };
  proto::NegoOfferSet offer;
  offer.offer = 1;
  offer.resources.push_back({"n1", {{0, {0, 1}}, {1, {2, 3}}}});
  s.init({}, "seed", 0);
  pump();
  s.request_offer(2, 0);
  pump();
  h.offer(offer, "requested", 0);
  pump();
  s.take_offer(0);
  pump();
  s.answer(true, {{5, "n1", {0, 2}}}, "", 0);
  pump();
  h.reoffer(offer, "mapping_rejected: two sockets", 0);
  pump();
  s.answer(true, {{5, "n1", {0, 1}}}, "", 0);
  pump();
  h.accept_mapping(0);
  pump();
  s.urgent({9, 2, 1}, 0);
  pump();
  h.report({}, 0);
  s.finalize("seed done", 0);
  pump();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"agreed", script({kInit, kRequest, kOffer, kTake, kAnswer, kAccept})},
      {"reoffered", script({kInit, kRequest, kOffer, kTake, kAnswer, kReoffer, kAnswer, kAccept})},
      {"declined", script({kInit, kRequest, kOffer, kDecline, kRequest, kOffer})},
      {"timeout", script({kInit, kRequest, kOffer, kTake, advance(30), kAnswer})},
      {"gone", script({kInit, kRequest, kOffer, kTake, kAnswer, kAccept, kPeersGone, kInit})},
      {"ended", script({kInit, kRequest, kOffer, kTake, kAbandon, kFinalize})},
      {"transcript", transcript()},
  };
  for (const auto& [name, bytes] : seeds) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
  return 0;
}
