#include "sched/proto/text.hpp"

#include <cstdint>
#include <cstdio>

namespace sched::proto {
namespace {

// The length of the well-formed UTF-8 sequence at text[i], or 0 when the
// bytes there are not one (RFC 3629, table 3-7 of the Unicode standard).
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t low = 0x80;
  std::uint8_t high = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;   // overlong
    if (b0 == 0xED) high = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;   // overlong
    if (b0 == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = sequence_length(text, i);
    const auto b0 = static_cast<std::uint8_t>(text[i]);
    std::string piece;
    if (length == 0 || (length == 1 && (b0 < 0x20 || b0 == 0x7F))) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", b0);
      piece = escaped;
    } else {
      piece = std::string(text.substr(i, length));
    }
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += length == 0 ? 1 : length;
  }
  if (i < text.size()) out += "… (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace sched::proto
