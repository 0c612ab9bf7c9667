#include "sched/proto/envelope.hpp"

#include "sched/proto/text.hpp"

namespace sched::proto {
namespace {

// Bounds for what the unpacker allocates before any field is checked: a
// message of `size` bytes cannot hold more items or longer strings than it
// has bytes, so a header claiming millions of items in a few bytes is refused
// before the unpacker reserves room for them.
msgpack::unpack_limit limits(std::size_t size) {
  return msgpack::unpack_limit(/*array=*/size, /*map=*/size, /*str=*/size,
                               /*bin=*/size, /*ext=*/0, /*depth=*/32);
}

// Copy every string into the handle's zone: the caller's buffer (a ZeroMQ
// frame) may go away before the envelope does.
bool never_reference(msgpack::type::object_type, std::size_t, void*) { return false; }

}  // namespace

namespace detail {

std::string_view type_name(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL:
      return "nil";
    case msgpack::type::BOOLEAN:
      return "a boolean";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
      return "an integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return "a float";
    case msgpack::type::STR:
      return "a string";
    case msgpack::type::BIN:
      return "binary data";
    case msgpack::type::ARRAY:
      return "an array";
    case msgpack::type::MAP:
      return "a map";
    case msgpack::type::EXT:
      return "an extension";
  }
  return "something unknown";
}

void mistyped(const std::string& path, std::string_view expected, const msgpack::object& o) {
  throw ProtoError(code::kBadField, path + ": expected " + std::string(expected) + ", got " +
                                        std::string(type_name(o)));
}

void pack_header(Packer& pk, std::uint32_t entries, std::string_view type, std::uint64_t seq) {
  pk.pack_map(entries);
  pk.pack(std::string_view("v"));
  pk.pack(kVersion);
  pk.pack(std::string_view("type"));
  pk.pack(type);
  pk.pack(std::string_view("seq"));
  pk.pack(seq);
}

}  // namespace detail

namespace {

// The envelope's own fields, read with the same checks as bodies.
struct Header {
  int v = 0;
  std::string type;
  std::uint64_t seq = 0;
  std::optional<bool> ok;
  std::optional<ErrorBody> error;
  std::optional<std::string> cred;
  std::optional<std::uint64_t> session;
  std::optional<std::string> mac;
  template <class V>
  void fields(V& f) {
    f("v", v);
    f("type", type);
    f("seq", seq);
    f("ok", ok);
    f("error", error);
    f("cred", cred);
    f("session", session);
    f("mac", mac);
  }
};

struct VersionOnly {
  int v = 0;
  template <class V>
  void fields(V& f) {
    f("v", v);
  }
};

const msgpack::object* find_body(const msgpack::object& root) {
  const msgpack::object_map& map = root.via.map;
  for (std::uint32_t i = 0; i < map.size; ++i) {
    const msgpack::object& k = map.ptr[i].key;
    if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == "body") {
      return &map.ptr[i].val;
    }
  }
  return nullptr;
}

}  // namespace

Envelope decode(const void* data, std::size_t size, std::size_t max_bytes) {
  if (size > max_bytes) {
    throw ProtoError(code::kTooLarge, "message of " + std::to_string(size) +
                                          " bytes is over the limit of " +
                                          std::to_string(max_bytes));
  }
  Envelope envelope;
  std::size_t offset = 0;
  try {
    envelope.handle = msgpack::unpack(static_cast<const char*>(data), size, offset, never_reference,
                                      nullptr, limits(size));
  } catch (const std::exception& e) {
    throw ProtoError(code::kBadMessage, std::string("not a msgpack message: ") + e.what());
  }
  if (offset != size) {
    throw ProtoError(code::kBadMessage,
                     std::to_string(size - offset) + " bytes after the end of the message");
  }
  const msgpack::object& root = envelope.handle.get();
  if (root.type != msgpack::type::MAP) {
    throw ProtoError(code::kBadMessage,
                     "a message must be a map, got " + std::string(detail::type_name(root)));
  }
  // The version first: a peer of another version may shape the rest otherwise.
  const int version = read_body<VersionOnly>(root, "").v;
  if (version != kVersion) {
    throw ProtoError(code::kBadVersion, "protocol version " + std::to_string(version) +
                                            " is not supported (this side speaks " +
                                            std::to_string(kVersion) + ")");
  }
  Header header = read_body<Header>(root, "");
  envelope.v = header.v;
  envelope.type = std::move(header.type);
  envelope.seq = header.seq;
  envelope.ok = header.ok;
  envelope.error = std::move(header.error);
  envelope.cred = std::move(header.cred);
  envelope.session = header.session;
  envelope.mac = std::move(header.mac);
  envelope.body = find_body(root);
  return envelope;
}

std::string packed_body(const Envelope& envelope) {
  msgpack::sbuffer buffer;
  if (envelope.body) {
    msgpack::pack(buffer, *envelope.body);
  } else {
    msgpack::pack(buffer, msgpack::type::nil_t());
  }
  return std::string(buffer.data(), buffer.size());
}

std::string encode_packed_request(std::string_view type, std::uint64_t seq,
                                  std::string_view packed_body, std::string_view cred) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  detail::pack_header(pk, cred.empty() ? 4 : 5, type, seq);
  pk.pack(std::string_view("body"));
  buffer.write(packed_body.data(), packed_body.size());
  if (!cred.empty()) {
    pk.pack(std::string_view("cred"));
    pk.pack(cred);
  }
  return std::string(buffer.data(), buffer.size());
}

std::string encode_session_request(std::string_view type, std::uint64_t seq,
                                   std::string_view packed_body, std::uint64_t session,
                                   std::string_view mac) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  detail::pack_header(pk, 6, type, seq);
  pk.pack(std::string_view("body"));
  buffer.write(packed_body.data(), packed_body.size());
  pk.pack(std::string_view("session"));
  pk.pack(session);
  pk.pack(std::string_view("mac"));
  pk.pack(mac);
  return std::string(buffer.data(), buffer.size());
}

std::string encode_error(std::string_view type, std::uint64_t seq, std::string_view code,
                         std::string_view message) {
  // An error answers what a peer sent, whatever its size: it repeats only an
  // excerpt of it (docs/protocol.md §3).
  const auto bounded = [](std::string_view text, std::size_t max) {
    return text.size() <= max && valid_utf8(text) ? std::string(text) : excerpt(text, max);
  };
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  detail::pack_header(pk, 5, bounded(type, kMaxTypeBytes), seq);
  pk.pack(std::string_view("ok"));
  pk.pack(false);
  pk.pack(std::string_view("error"));
  pk.pack_map(2);
  pk.pack(std::string_view("code"));
  pk.pack(code);
  pk.pack(std::string_view("message"));
  pk.pack(bounded(message, kMaxErrorMessageBytes));
  return std::string(buffer.data(), buffer.size());
}

}  // namespace sched::proto
