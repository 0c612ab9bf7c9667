// Errors of the wire protocol (docs/protocol.md §3). A ProtoError carries the
// code an error reply sends back and a message for people that says what was
// wrong and where ("body.job.nodes: expected an integer, got a string").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace sched::proto {

// Codes of error replies. The first group is the protocol's own (a message
// that could not be understood); the second is what handlers answer.
namespace code {
inline constexpr std::string_view kBadMessage = "bad_message";  // not a msgpack map, trailing bytes
inline constexpr std::string_view kTooLarge = "too_large";      // over the size limit
inline constexpr std::string_view kBadVersion = "bad_version";  // another protocol version
inline constexpr std::string_view kUnknownType = "unknown_type";
inline constexpr std::string_view kBadField = "bad_field";  // missing or mistyped field
inline constexpr std::string_view kInvalid = "invalid";  // well-formed but refused (bad job spec)
inline constexpr std::string_view kNotFound = "not_found";       // no such job or node
inline constexpr std::string_view kConflict = "conflict";        // not in a state that allows it
inline constexpr std::string_view kUnavailable = "unavailable";  // the server cannot now
inline constexpr std::string_view kInternal = "internal";
inline constexpr std::string_view kAborted = "aborted";  // an adaptation was rolled back
inline constexpr std::string_view kExpired = "expired";  // a resize request not granted in time
// Who asks (docs/security.md): no credential, or one that does not prove who
// sent this request; a caller who may not do what it asks; a per-user limit.
inline constexpr std::string_view kUnauthenticated = "unauthenticated";
inline constexpr std::string_view kPermissionDenied = "permission_denied";
inline constexpr std::string_view kLimit = "limit";
// A request of a session schedd does not know (any more): it expired, schedd
// restarted, or it was opened on another connection. Nothing was done; the
// client opens a new session and sends it again (docs/protocol.md §2.1).
inline constexpr std::string_view kSessionGone = "session_gone";
}  // namespace code

class ProtoError : public std::runtime_error {
 public:
  ProtoError(std::string_view code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

}  // namespace sched::proto
