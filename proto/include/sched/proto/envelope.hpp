// The envelope every message travels in (docs/design.md §5, docs/protocol.md §2):
//
//   request:  {v = 1, type, seq, body, cred?}
//             {v = 1, type, seq, body, session, mac}     (in a session)
//   reply:    {v = 1, type, seq, ok = true,  body}
//             {v = 1, type, seq, ok = false, error = {code, message}}
//
// A reply repeats the request's type and seq so that the asker can match it.
// `cred` is the sender's credential (a MUNGE credential on the client
// socket, docs/protocol.md §2); the envelope only carries it: the receiver
// checks it against the request (packed_body gives what it binds). A
// request in a session carries the session's id and its MAC instead
// (proto/session.hpp).
// decode() checks size, msgpack well-formedness, the version and the fields
// of the envelope; the body is read later, by type (read_body), so that a bad
// body can still be answered with an error that names the request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "sched/proto/error.hpp"
#include "sched/proto/fields.hpp"

namespace sched::proto {

inline constexpr int kVersion = 1;
// Default size limit of one message; daemons may set their own.
inline constexpr std::size_t kDefaultMaxMessageBytes = 4 << 20;

struct ErrorBody {
  std::string code;
  std::string message;
  template <class V>
  void fields(V& v) {
    v("code", code);
    v("message", message);
  }
};

struct Envelope {
  int v = kVersion;
  std::string type;
  std::uint64_t seq = 0;
  std::optional<bool> ok;                 // set on replies only
  std::optional<ErrorBody> error;         // replies with ok = false
  std::optional<std::string> cred;        // requests: the sender's credential
  std::optional<std::uint64_t> session;   // requests in a session: its id
  std::optional<std::string> mac;         // and their MAC (64 hex digits)
  const msgpack::object* body = nullptr;  // nil object when absent; owned by `handle`

  bool is_reply() const { return ok.has_value(); }
  // The body as T; throws ProtoError(bad_field) naming the field.
  template <class T>
  T body_as() const {
    static const msgpack::object nil;
    return read_body<T>(body ? *body : nil);
  }

  msgpack::object_handle handle;  // keeps the decoded data alive
};

// Decodes one message. Throws ProtoError: too_large, bad_message (not
// msgpack, not a map, trailing bytes, nesting too deep), bad_version,
// bad_field (type or seq missing or mistyped).
Envelope decode(const void* data, std::size_t size,
                std::size_t max_bytes = kDefaultMaxMessageBytes);

// The body as msgpack bytes, in the shortest forms (as every encoder here
// writes it): what a request's credential binds; the bytes of a nil object
// when the envelope has no body.
std::string packed_body(const Envelope& envelope);

// Encoders. The body type must have fields() (proto/fields.hpp). A request
// carries `cred` when it is not empty.
template <class T>
std::string encode_request(std::string_view type, std::uint64_t seq, const T& body,
                           std::string_view cred = {});
// A request whose body is already packed (encode_body).
std::string encode_packed_request(std::string_view type, std::uint64_t seq,
                                  std::string_view packed_body, std::string_view cred = {});
// A request of session `session`, with its MAC (proto/session.hpp).
std::string encode_session_request(std::string_view type, std::uint64_t seq,
                                   std::string_view packed_body, std::uint64_t session,
                                   std::string_view mac);
template <class T>
std::string encode_reply(std::string_view type, std::uint64_t seq, const T& body);
std::string encode_error(std::string_view type, std::uint64_t seq, std::string_view code,
                         std::string_view message);
// An event body on the PUB socket (no envelope: the topic frame says what it is).
template <class T>
std::string encode_body(const T& body);

// ---------------------------------------------------------------- inline part

namespace detail {
void pack_header(Packer& pk, std::uint32_t entries, std::string_view type, std::uint64_t seq);
}

template <class T>
std::string encode_body(const T& body);

template <class T>
std::string encode_request(std::string_view type, std::uint64_t seq, const T& body,
                           std::string_view cred) {
  return encode_packed_request(type, seq, encode_body(body), cred);
}

template <class T>
std::string encode_reply(std::string_view type, std::uint64_t seq, const T& body) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  detail::pack_header(pk, 5, type, seq);
  pk.pack(std::string_view("ok"));
  pk.pack(true);
  pk.pack(std::string_view("body"));
  pack_body(pk, body);
  return std::string(buffer.data(), buffer.size());
}

template <class T>
std::string encode_body(const T& body) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pack_body(pk, body);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace sched::proto
