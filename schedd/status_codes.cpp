#include "status_codes.hpp"

#include <string>

#include "sched/proto/error.hpp"

namespace sched::daemon {

std::string_view wire_code(StatusCode code) {
  switch (code) {
    case StatusCode::NotFound:
      return proto::code::kNotFound;
    case StatusCode::Conflict:
      return proto::code::kConflict;
    case StatusCode::Invalid:
      return proto::code::kInvalid;
    case StatusCode::Ok:
      break;
  }
  return proto::code::kInternal;
}

void throw_status(const Status& status) {
  if (status.ok()) throw proto::ProtoError(proto::code::kInternal, "an error reply for a success");
  throw proto::ProtoError(wire_code(status.code()), status.message());
}

}  // namespace sched::daemon
