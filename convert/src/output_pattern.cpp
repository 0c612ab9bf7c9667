#include "sched/convert/output_pattern.hpp"

#include <cctype>

namespace sched::convert {
namespace {

// Widths beyond this are taken literally: a file name has no use for them.
constexpr std::size_t kMaxWidth = 64;

std::string padded(const std::string& value, std::size_t width, char fill) {
  if (value.size() >= width) return value;
  return std::string(width - value.size(), fill) + value;
}

}  // namespace

std::string expand_output_pattern(std::string_view pattern, const OutputNames& names) {
  std::string out;
  if (pattern.find('\\') != std::string_view::npos) {
    for (char c : pattern) {
      if (c != '\\') out += c;
    }
    return out;
  }
  out.reserve(pattern.size());
  std::size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] != '%') {
      out += pattern[i++];
      continue;
    }
    std::size_t j = i + 1;
    std::size_t width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j])) &&
           width <= kMaxWidth) {
      width = width * 10 + static_cast<std::size_t>(pattern[j] - '0');
      ++j;
    }
    if (j >= pattern.size() || width > kMaxWidth) {  // a trailing '%' or a silly width
      out.append(pattern.substr(i, j - i));
      i = j;
      continue;
    }
    const char letter = pattern[j];
    std::optional<std::string> number;
    std::optional<std::string> text;
    switch (letter) {
      case '%':
        text = "%";
        break;
      case 'j':
        number = std::to_string(names.job);
        break;
      case 'A':
        number = std::to_string(names.array_master.value_or(names.job));
        break;
      case 'a':
        number = std::to_string(names.array_index.value_or(kNoArrayIndex));
        break;
      case 'x':
        text = names.name;
        break;
      case 'u':
        text = names.user;
        break;
      case 'N':
        if (!names.node.empty()) text = names.node;
        break;
      default:
        break;
    }
    if (number) {
      out += padded(*number, width, '0');
    } else if (text) {
      out += padded(*text, width, ' ');
    } else {
      out.append(pattern.substr(i, j + 1 - i));  // as written
    }
    i = j + 1;
  }
  return out;
}

}  // namespace sched::convert
