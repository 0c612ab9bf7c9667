#include "sched/plot/text_buffer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace sched::plot {
namespace {

constexpr int kFastDecimals = 15;  // 10^15 is exact as a double and as an integer
constexpr std::uint64_t kPow10[kFastDecimals + 1] = {1,
                                                     10,
                                                     100,
                                                     1000,
                                                     10000,
                                                     100000,
                                                     1000000,
                                                     10000000,
                                                     100000000,
                                                     1000000000,
                                                     10000000000,
                                                     100000000000,
                                                     1000000000000,
                                                     10000000000000,
                                                     100000000000000,
                                                     1000000000000000};
constexpr double kTwoTo52 = 4503599627370496.0;
// The longest fast-path text: '-', 16 integer digits, '.', 15 decimals.
constexpr std::size_t kFastRoom = 40;
// The longest fixed text to_chars gives: 309 integer digits of DBL_MAX,
// with room for decimals.
constexpr std::size_t kExactRoom = 400;

// The digits of `value`; 32-bit division, where it fits, is the cheaper.
char* write_unsigned(char* at, std::uint64_t value) {
  if (value <= std::numeric_limits<std::uint32_t>::max())
    return std::to_chars(at, at + 20, static_cast<std::uint32_t>(value)).ptr;
  return std::to_chars(at, at + 20, value).ptr;
}

// `value` as exactly `digits` digits, zero-padded on the left.
template <typename Unsigned>
char* write_padded(char* at, Unsigned value, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    at[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return at + digits;
}

// The decimals of a fixed text: `decimals` digits, trailing zeros dropped
// (none left: no point either).
char* write_decimals(char* at, std::uint64_t value, int decimals) {
  if (value == 0) return at;
  for (; value % 10 == 0; value /= 10) --decimals;
  *at++ = '.';
  if (decimals <= 9) return write_padded(at, static_cast<std::uint32_t>(value), decimals);
  return write_padded(at, value, decimals);
}

}  // namespace

void TextBuffer::reserve(std::size_t bytes) {
  if (bytes > capacity_ - size_) grow(bytes);
}

void TextBuffer::grow(std::size_t bytes) {
  const std::size_t capacity = std::max(2 * capacity_, size_ + bytes + 256);
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

std::string TextBuffer::take() {
  std::string text(view());
  size_ = 0;
  return text;
}

void TextBuffer::append_integer(long long value) {
  char* const begin = room(24);
  char* at = begin;
  auto magnitude = static_cast<std::uint64_t>(value);
  if (value < 0) {
    *at++ = '-';
    magnitude = 0 - magnitude;  // also right for the most negative value
  }
  at = write_unsigned(at, magnitude);
  size_ += static_cast<std::size_t>(at - begin);
}

// A value with a fractional part, rounded to `decimals` decimals in
// integers: |value| × 10^d computed in a
// double, `scaled`, is off the exact product by at most half a unit in its
// last place; below 2^52 a fractional part other than exactly 0.5 is then
// at least a unit from 0.5 and rounds the exact product the same way. At
// 0.5 the product's exact remainder (an fma) decides; an exact tie rounds
// to even, as to_chars does.
bool TextBuffer::append_fraction_fast(double value, int decimals) {
  if (decimals < 0 || decimals > kFastDecimals || !(std::fabs(value) < kTwoTo52)) return false;
  const double magnitude = std::fabs(value);
  const double power = static_cast<double>(kPow10[decimals]);
  const double scaled = magnitude * power;
  if (!(scaled < kTwoTo52)) return false;
  const auto whole = static_cast<std::uint64_t>(scaled);        // the floor: scaled >= 0
  const double fraction = scaled - static_cast<double>(whole);  // exact
  bool up = fraction > 0.5;
  if (fraction == 0.5) {
    const double remainder = std::fma(magnitude, power, -scaled);  // exact product − scaled
    up = remainder > 0 || (remainder == 0 && whole % 2 == 1);
  }
  const std::uint64_t units = whole + (up ? 1 : 0);
  char* const begin = room(kFastRoom);
  char* at = begin;
  if (units == 0) {
    *at++ = '0';  // also for a negative value that rounds to zero
  } else {
    if (value < 0) *at++ = '-';
    at = write_unsigned(at, units / kPow10[decimals]);
    at = write_decimals(at, units % kPow10[decimals], decimals);
  }
  size_ += static_cast<std::size_t>(at - begin);
  return true;
}

void TextBuffer::append_fixed_exact(double value, int decimals) {
  char* const begin = room(kExactRoom);
  const auto [end, error] =
      std::to_chars(begin, begin + kExactRoom, value, std::chars_format::fixed, decimals);
  if (error != std::errc{}) {
    append('0');
    return;
  }
  std::string_view text(begin, static_cast<std::size_t>(end - begin));
  if (text.find('.') != std::string_view::npos) {
    text.remove_suffix(text.size() - text.find_last_not_of('0') - 1);
    if (text.back() == '.') text.remove_suffix(1);
  }
  if (text == "-0") text = "0";
  if (text.data() != begin) text.copy(begin, text.size());
  size_ += text.size();
}

std::string fixed_text(double value, int decimals) {
  TextBuffer buffer;
  buffer.append_fixed(value, decimals);
  return buffer.take();
}

}  // namespace sched::plot
