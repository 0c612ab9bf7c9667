// The wire decoder, as schedd, the agents and the job processes use it: the
// envelope first (decode), then the body read as a message type of the
// protocol, since a peer may send any body under any type. The input's first
// byte picks the body type (one typed read per input keeps the fuzzer fast
// under the sanitizers); the rest is the message. Bad input is a ProtoError
// with a code; nothing else may come out.
#include <cstddef>
#include <tuple>

#include "fuzz_target.hpp"
#include "message_bodies.hpp"
#include "sched/proto/envelope.hpp"

namespace {

using namespace sched::proto;
using sched::fuzz::Bodies;
using sched::fuzz::kBodies;

template <std::size_t I = 0>
void read_as(std::size_t index, const Envelope& envelope) {
  if constexpr (I < kBodies) {
    if (index != I) return read_as<I + 1>(index, envelope);
    (void)envelope.body_as<std::tuple_element_t<I, Bodies>>();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  try {
    const Envelope envelope = decode(data + 1, size - 1);
    read_as(data[0] % kBodies, envelope);
  } catch (const ProtoError&) {
  }
  return 0;
}
