// A growing text buffer that takes numbers without a string per number: the
// SVG pictures and the CSV reports of `sched sim --out` print hundreds of
// thousands of them, and a to_chars and a string per number made the
// outputs of a lublin_256 replay nearly a tenth of its instructions.
#pragma once

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sched::plot {

class TextBuffer {
 public:
  // Room for `bytes` more characters without growing.
  void reserve(std::size_t bytes);

  void append(std::string_view text) {
    char* at = room(text.size());
    text.copy(at, text.size());
    size_ += text.size();
  }
  void append(char c) {
    *room(1) = c;
    ++size_;
  }
  TextBuffer& operator+=(std::string_view text) {
    append(text);
    return *this;
  }
  TextBuffer& operator+=(char c) {
    append(c);
    return *this;
  }

  // Decimal digits, a '-' if negative.
  void append_integer(long long value);

  // `value` in fixed notation with `decimals` (>= 0) decimals, trailing
  // zeros and a bare point dropped and "-0" shown as "0": exactly what
  // std::to_chars(fixed, decimals) followed by that trimming gives (12.5,
  // 3, 0.12 for 0.125 at 2 decimals as the double 0.125 is a tie rounded to
  // even; "inf", "nan" for those).
  void append_fixed(double value, int decimals) {
    // Whole values (most times in a trace) print as integers; to_chars
    // writes nothing but zeros after their point.
    if (std::fabs(value) < 0x1p52) {
      const auto integral = static_cast<long long>(value);  // truncated
      if (static_cast<double>(integral) == value) {
        append_integer(integral);  // -0 included, as "0"
        return;
      }
    }
    if (!append_fraction_fast(value, decimals)) append_fixed_exact(value, decimals);
  }

  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // The text as a string; the buffer is left empty.
  std::string take();

 private:
  // Space for `bytes` more characters at the end (not yet counted in size_).
  char* room(std::size_t bytes) {
    if (capacity_ - size_ < bytes) grow(bytes);
    return data_.get() + size_;
  }
  void grow(std::size_t bytes);
  bool append_fraction_fast(double value, int decimals);
  void append_fixed_exact(double value, int decimals);

  // Not a std::string: growing one writes every new byte twice.
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;  // the first size_ characters are the text
};

// TextBuffer::append_fixed as a string.
std::string fixed_text(double value, int decimals);

}  // namespace sched::plot
