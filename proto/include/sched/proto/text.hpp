// Text checks shared by both ends of the wire: msgpack strings are UTF-8
// (docs/protocol.md §2), and what a peer sent is echoed back, or logged, only
// as a short excerpt, so that a 100 KB field cannot make a 100 KB error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sched::proto {

// The longest excerpt of a peer's text in an error message or a log line,
// and the longest error message and type an error reply carries.
inline constexpr std::size_t kExcerptBytes = 64;
inline constexpr std::size_t kMaxErrorMessageBytes = 512;
inline constexpr std::size_t kMaxTypeBytes = 64;

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, at
// most U+10FFFF).
bool valid_utf8(std::string_view text);

// `text` cut to at most `max_bytes` bytes on a character boundary, with
// every byte that is not part of valid UTF-8 and every control character
// written as \xNN; when cut, "… (N bytes)" follows. Always valid UTF-8.
std::string excerpt(std::string_view text, std::size_t max_bytes = kExcerptBytes);

}  // namespace sched::proto
