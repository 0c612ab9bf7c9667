// Message bodies as plain structs, encoded as msgpack maps keyed by field
// name. A struct lists its fields once, in a member template
//
//   struct Cancel {
//     std::int64_t id = 0;
//     std::optional<std::string> reason;
//     template <class V> void fields(V& v) { v("id", id); v("reason", reason); }
//   };
//
// and the same list packs it (pack_body) and reads it back with every field
// checked (read_body): a missing required field or a value of the wrong type
// is a ProtoError naming the field's path. std::optional fields may be absent
// (or nil); unknown fields are ignored, so a newer peer can add fields.
//
// Value types: bool, integers, double (an integer is accepted for it),
// std::string, std::vector<T>, std::optional<T>, std::map<std::string, T>,
// and structs with fields().
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "sched/proto/error.hpp"

namespace sched::proto {

using Packer = msgpack::packer<msgpack::sbuffer>;

namespace detail {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

struct FieldCounter {
  std::uint32_t count = 0;
  template <class T>
  void operator()(const char*, const T& value) {
    if constexpr (is_optional<T>::value) {
      if (!value) return;
    }
    ++count;
  }
};

template <class T>
concept HasFields = requires(T& t, FieldCounter& c) {
  t.fields(c);
};

std::string_view type_name(const msgpack::object& o);
[[noreturn]] void mistyped(const std::string& path, std::string_view expected,
                           const msgpack::object& o);

template <class T>
void pack_value(Packer& pk, const T& value);

struct FieldPacker {
  Packer& pk;
  template <class T>
  void operator()(const char* key, const T& value) {
    if constexpr (is_optional<T>::value) {
      if (!value) return;
      pk.pack(std::string_view(key));
      pack_value(pk, *value);
    } else {
      pk.pack(std::string_view(key));
      pack_value(pk, value);
    }
  }
};

template <class T>
void pack_value(Packer& pk, const T& value) {
  if constexpr (HasFields<T>) {
    // fields() only reads through the packer; one list serves both ways.
    T& self = const_cast<T&>(value);
    FieldCounter counter;
    self.fields(counter);
    pk.pack_map(counter.count);
    FieldPacker packer{pk};
    self.fields(packer);
  } else if constexpr (is_vector<T>::value) {
    pk.pack_array(static_cast<std::uint32_t>(value.size()));
    for (const auto& item : value) pack_value(pk, item);
  } else if constexpr (is_string_map<T>::value) {
    pk.pack_map(static_cast<std::uint32_t>(value.size()));
    for (const auto& [key, item] : value) {
      pk.pack(key);
      pack_value(pk, item);
    }
  } else if constexpr (is_optional<T>::value) {
    if (value) {
      pack_value(pk, *value);
    } else {
      pk.pack_nil();
    }
  } else {
    pk.pack(value);
  }
}

template <class T>
void read_value(const msgpack::object& o, T& out, const std::string& path);

// Reads the fields of a struct from a msgpack map.
struct FieldReader {
  const msgpack::object_map& map;
  const std::string& path;

  const msgpack::object* find(std::string_view key) const {
    for (std::uint32_t i = 0; i < map.size; ++i) {
      const msgpack::object& k = map.ptr[i].key;
      if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == key) {
        return &map.ptr[i].val;
      }
    }
    return nullptr;
  }

  template <class T>
  void operator()(const char* key, T& value) {
    const std::string field = path.empty() ? std::string(key) : path + "." + key;
    const msgpack::object* o = find(key);
    if constexpr (is_optional<T>::value) {
      if (!o || o->type == msgpack::type::NIL) {
        value.reset();
        return;
      }
      typename T::value_type inner{};
      read_value(*o, inner, field);
      value = std::move(inner);
    } else {
      if (!o) throw ProtoError(code::kBadField, field + ": missing");
      read_value(*o, value, field);
    }
  }
};

template <class T>
void read_value(const msgpack::object& o, T& out, const std::string& path) {
  using msgpack::type::object_type;
  if constexpr (HasFields<T>) {
    if (o.type != object_type::MAP) mistyped(path, "a map", o);
    FieldReader reader{o.via.map, path};
    out.fields(reader);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (o.type != object_type::BOOLEAN) mistyped(path, "a boolean", o);
    out = o.via.boolean;
  } else if constexpr (std::is_integral_v<T>) {
    if (o.type == object_type::POSITIVE_INTEGER) {
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw ProtoError(code::kBadField, path + ": integer out of range");
      }
      out = static_cast<T>(o.via.u64);
    } else if (o.type == object_type::NEGATIVE_INTEGER) {
      if constexpr (std::is_unsigned_v<T>) {
        throw ProtoError(code::kBadField, path + ": must not be negative");
      } else {
        if (o.via.i64 < static_cast<std::int64_t>(std::numeric_limits<T>::min())) {
          throw ProtoError(code::kBadField, path + ": integer out of range");
        }
        out = static_cast<T>(o.via.i64);
      }
    } else {
      mistyped(path, "an integer", o);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (o.type == object_type::FLOAT32 || o.type == object_type::FLOAT64) {
      out = static_cast<T>(o.via.f64);
    } else if (o.type == object_type::POSITIVE_INTEGER) {
      out = static_cast<T>(o.via.u64);
    } else if (o.type == object_type::NEGATIVE_INTEGER) {
      out = static_cast<T>(o.via.i64);
    } else {
      mistyped(path, "a number", o);
    }
    if (!std::isfinite(out)) throw ProtoError(code::kBadField, path + ": not a finite number");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (o.type != object_type::STR) mistyped(path, "a string", o);
    out.assign(o.via.str.ptr, o.via.str.size);
  } else if constexpr (is_vector<T>::value) {
    if (o.type != object_type::ARRAY) mistyped(path, "an array", o);
    out.clear();
    out.resize(o.via.array.size);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
      read_value(o.via.array.ptr[i], out[i], path + "[" + std::to_string(i) + "]");
    }
  } else if constexpr (is_string_map<T>::value) {
    if (o.type != object_type::MAP) mistyped(path, "a map", o);
    out.clear();
    for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
      const msgpack::object& k = o.via.map.ptr[i].key;
      if (k.type != object_type::STR) mistyped(path + " key", "a string", k);
      std::string key(k.via.str.ptr, k.via.str.size);
      read_value(o.via.map.ptr[i].val, out[key], path + "." + key);
    }
  } else {
    static_assert(sizeof(T) == 0, "no wire encoding for this type");
  }
}

}  // namespace detail

// Packs a struct with fields() as a msgpack map.
template <class T>
void pack_body(Packer& pk, const T& body) {
  detail::pack_value(pk, body);
}

// Reads a struct from a msgpack object; throws ProtoError(bad_field) naming
// `path` and the field when something is missing or mistyped.
template <class T>
T read_body(const msgpack::object& o, const std::string& path = "body") {
  T out{};
  detail::read_value(o, out, path);
  return out;
}

// An empty body (requests and replies that carry nothing).
struct Empty {
  template <class V>
  void fields(V&) {}
};

}  // namespace sched::proto
