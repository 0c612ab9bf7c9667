// The input of the negotiation fuzz target: a script of steps for an
// iScheduler and an iHypervisor side, as bytes. Each step is one byte `op`,
// followed, for the two message steps, by a 16-bit little-endian length and
// that many bytes:
//   op % 8 = 0  a message to the iHypervisor      1  a message to the iScheduler
//            2  H offers                          3  H re-offers (op & 8) or accepts
//            4  an S decision (op >> 3) % 5: init, request, take, answer, decline
//            5  both sides' clocks advance (op >> 3) seconds
//            6  every message in flight is delivered, both ways
//            7  (op >> 3) % 3: both peers gone, S finalizes, H abandons
// The seeds are written from real negotiations by make_negotiation_seeds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sched::fuzz {

inline void append_message(std::string& script, bool to_scheduler, std::string_view bytes) {
  script.push_back(static_cast<char>(to_scheduler ? 1 : 0));
  const auto n = static_cast<std::uint16_t>(bytes.size() > 0xffff ? 0xffff : bytes.size());
  script.push_back(static_cast<char>(n & 0xff));
  script.push_back(static_cast<char>(n >> 8));
  script.append(bytes.substr(0, n));
}

inline void append_op(std::string& script, std::uint8_t op) {
  script.push_back(static_cast<char>(op));
}

}  // namespace sched::fuzz
