// A growing text buffer that takes numbers without a string per number: the
// SVG pictures and the CSV reports of `sched sim --out` print hundreds of
// thousands of them, and a temporary string (or printf) per number cost a
// replay of lublin_256 a tenth of its time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sched::plot {

class TextBuffer {
 public:
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

  // `value` in fixed notation with `decimals` decimals (0 to 17), trailing
  // zeros and a bare point dropped and "-0" shown as "0": exactly what
  // std::to_chars(fixed, decimals) followed by that trimming gives (12.5,
  // 3, 0.12 for 0.125 at 2 decimals as the double 0.125 is a tie rounded to
  // even; "inf", "nan" for those).
  void append_fixed(double value, int decimals);

  std::string_view view() const { return {text_.data(), size_}; }
  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // The text; the buffer is left empty.
  std::string take();

 private:
  // Space for `bytes` more characters at the end (not yet counted in size_).
  char* room(std::size_t bytes) {
    if (text_.size() - size_ < bytes) grow(bytes);
    return text_.data() + size_;
  }
  void grow(std::size_t bytes);
  bool append_fixed_fast(double value, int decimals);
  void append_fixed_exact(double value, int decimals);

  std::string text_;  // sized ahead; the first size_ characters are the text
  std::size_t size_ = 0;
};

// TextBuffer::append_fixed as a string.
std::string fixed_text(double value, int decimals);

}  // namespace sched::plot
