// What a negotiation peer sends (another batch system's iScheduler or
// iHypervisor: not trusted to follow docs/negotiation.md), mixed with the
// owners' decisions and the passing of time: a peer's bytes never make a side
// throw or crash; an owner's call the protocol does not
// allow throws NegotiationError and nothing else.
#include <algorithm>
#include <string_view>

#include "fuzz_target.hpp"
#include "negotiation_script.hpp"
#include "sched/negotiation/hypervisor_side.hpp"
#include "sched/negotiation/scheduler_side.hpp"

namespace {

using sched::negotiation::HypervisorSide;
using sched::negotiation::NegotiationError;
using sched::negotiation::SchedulerSide;

sched::proto::NegoOfferSet offer_of(std::int64_t id) {
  sched::proto::NegoOfferSet offer;
  offer.offer = id;
  offer.resources.push_back({"n1", {{0, {0, 1}}, {1, {2, 3}}}});
  return offer;
}

template <class F>
void owner(F&& call) {
  try {
    call();
  } catch (const NegotiationError&) {
    // The protocol does not allow this decision now: refused, nothing changed.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SchedulerSide s;
  HypervisorSide h;
  double now = 0;
  std::int64_t offers = 0;
  std::size_t i = 0;
  while (i < size) {
    const std::uint8_t op = data[i++];
    const int arg = op >> 3;
    switch (op % 8) {
      case 0:
      case 1: {
        if (i + 2 > size) return 0;
        std::size_t n = data[i] | (data[i + 1] << 8);
        i += 2;
        n = std::min(n, size - i);
        const std::string_view bytes(reinterpret_cast<const char*>(data + i), n);
        i += n;
        if (op % 8 == 0) {
          h.on_message(bytes, now);
        } else {
          s.on_message(bytes, now);
        }
        break;
      }
      case 2:
        owner([&] { h.offer(offer_of(++offers), "changed", now); });
        break;
      case 3:
        if (op & 8) {
          owner([&] { h.reoffer(offer_of(++offers), "mapping_rejected", now); });
        } else {
          owner([&] { h.accept_mapping(now); });
        }
        break;
      case 4:
        switch (arg % 5) {
          case 0:
            owner([&] { s.init({}, "fuzz", now); });
            break;
          case 1:
            owner([&] { s.request_offer(1 + arg, now); });
            break;
          case 2:
            owner([&] { s.take_offer(now); });
            break;
          case 3:
            owner([&] { s.answer(true, {{1 + arg, "n1", {arg % 4}}}, "", now); });
            break;
          default:
            owner([&] { s.decline("queue_empty", now); });
            break;
        }
        break;
      case 5:
        now += arg;
        s.tick(now);
        h.tick(now);
        break;
      case 6:
        for (int round = 0; round < 16; ++round) {
          auto to_h = s.take_outgoing();
          auto to_s = h.take_outgoing();
          if (to_h.empty() && to_s.empty()) break;
          for (const auto& m : to_h) h.on_message(m, now);
          for (const auto& m : to_s) s.on_message(m, now);
        }
        break;
      default:
        if (arg % 3 == 0) {
          s.peer_gone();
          h.peer_gone();
        } else if (arg % 3 == 1) {
          owner([&] { s.finalize("fuzz", now); });
        } else {
          owner([&] { h.abandon("fuzz", now); });
        }
        break;
    }
    (void)s.take_notes();
    (void)h.take_notes();
  }
  (void)s.take_outgoing();
  (void)h.take_outgoing();
  return 0;
}
