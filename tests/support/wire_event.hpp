// An event as a subscriber reads it: converted for the wire
// (convert::event_msg), packed with msgpack and read back.
#pragma once

#include <msgpack.hpp>

#include "sched/convert/wire_convert.hpp"
#include "sched/proto/fields.hpp"
#include "sched/proto/messages.hpp"

namespace sched::test {

inline proto::EventMsg on_the_wire(const Event& event) {
  msgpack::sbuffer buffer;
  proto::Packer packer(buffer);
  proto::pack_body(packer, convert::event_msg(event));
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  return proto::read_body<proto::EventMsg>(handle.get());
}

}  // namespace sched::test
