// The one place where an engine Status becomes a wire error (docs/protocol.md
// §3): a handler that gets a failed Status from the engine throws it with
// throw_status, so that every handler answers the same failure with the same
// code.
#pragma once

#include <string_view>

#include "sched/status.hpp"

namespace sched::daemon {

// The error code of an error reply for `code` (proto::code::kNotFound, ...).
// StatusCode::Ok has none: "internal" (answering an error for a success is a bug).
std::string_view wire_code(StatusCode code);

// Throws proto::ProtoError with wire_code(status.code()) and the status's
// message. A handler calls it only for a failed status; an ok one throws an
// "internal" error rather than returning.
[[noreturn]] void throw_status(const Status& status);

}  // namespace sched::daemon
