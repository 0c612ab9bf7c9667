#include "sched/tasks/nodelist.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace sched::tasks {
namespace {

constexpr std::size_t kMaxNames = 100000;
constexpr std::size_t kMaxDigits = 18;  // fits std::uint64_t

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string pad(std::uint64_t number, std::size_t width) {
  std::string digits = std::to_string(number);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// A name split into prefix and trailing number; names without a usable
// number stand alone.
struct SplitName {
  std::string_view prefix;
  std::string_view digits;  // empty: no number
  std::uint64_t number = 0;
};

SplitName split_name(std::string_view name) {
  std::size_t start = name.size();
  while (start > 0 && is_digit(name[start - 1])) --start;
  SplitName split{name.substr(0, start), name.substr(start)};
  if (split.digits.size() > kMaxDigits) return {name, {}};
  for (char c : split.digits) split.number = split.number * 10 + static_cast<unsigned>(c - '0');
  return split;
}

bool zero_padded(std::string_view digits) { return digits.size() > 1 && digits[0] == '0'; }

// Neighbouring names with one prefix. A group either pads its numbers to a
// fixed width (some member had a leading zero) or prints them plainly; a
// number joins only if it prints back exactly as it was written.
struct Group {
  std::string_view prefix;
  std::size_t width = 0;  // 0: plain numbers
  std::size_t min_len = 0, max_len = 0;
  std::vector<std::uint64_t> numbers;

  bool accepts(const SplitName& name) const {
    if (numbers.empty() || name.digits.empty() || name.prefix != prefix) return false;
    const std::size_t len = name.digits.size();
    if (width > 0) return len == width;
    if (zero_padded(name.digits)) return min_len == len && max_len == len;
    return true;
  }

  void add(const SplitName& name) {
    const std::size_t len = name.digits.size();
    if (numbers.empty()) {
      min_len = max_len = len;
    } else {
      min_len = std::min(min_len, len);
      max_len = std::max(max_len, len);
    }
    if (zero_padded(name.digits)) width = len;
    numbers.push_back(name.number);
  }

  std::string render() const {
    std::string out(prefix);
    if (numbers.size() == 1) return out + pad(numbers[0], width);
    out += '[';
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      if (i > 0) out += ',';
      out += pad(numbers[i], width);
      if (j > i) out += '-' + pad(numbers[j], width);
      i = j + 1;
    }
    return out + ']';
  }
};

// The numbers of one bracket's contents, "1-3,5", as padded strings.
std::vector<std::string> expand_ranges(std::string_view ranges, std::string_view whole) {
  std::vector<std::string> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad node list '" + std::string(whole) + "': " + why);
  };
  while (true) {
    const auto comma = ranges.find(',');
    const std::string_view range = ranges.substr(0, comma);
    const auto dash = range.find('-');
    const std::string_view lo = range.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
    for (std::string_view bound : {lo, hi}) {
      if (bound.empty() || bound.size() > kMaxDigits) throw bad("'" + std::string(range) + "'");
      for (char c : bound) {
        if (!is_digit(c)) throw bad("'" + std::string(range) + "' is not a number or range");
      }
    }
    const std::uint64_t first = split_name(lo).number;
    const std::uint64_t last = split_name(hi).number;
    if (first > last) throw bad("range '" + std::string(range) + "' runs backwards");
    if (last - first >= kMaxNames - out.size()) throw bad("too many names");
    for (std::uint64_t n = first; n <= last; ++n) out.push_back(pad(n, lo.size()));
    if (comma == std::string_view::npos) return out;
    ranges.remove_prefix(comma + 1);
  }
}

// One host-list item ("r[1-2]n[01-03]") into names, bracket by bracket.
void expand_item(std::string_view item, std::string_view whole, std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  while (!item.empty()) {
    const auto open = item.find('[');
    const std::string_view text = item.substr(0, open);
    if (text.find(']') != std::string_view::npos) {
      throw std::invalid_argument("bad node list '" + std::string(whole) + "': unbalanced ']'");
    }
    for (auto& name : names) name += text;
    if (open == std::string_view::npos) break;
    const auto close = item.find(']', open);
    const auto nested = item.find('[', open + 1);
    if (close == std::string_view::npos || nested < close) {
      throw std::invalid_argument("bad node list '" + std::string(whole) + "': unbalanced '['");
    }
    const auto numbers = expand_ranges(item.substr(open + 1, close - open - 1), whole);
    if (names.size() * numbers.size() > kMaxNames) {
      throw std::invalid_argument("bad node list '" + std::string(whole) + "': too many names");
    }
    std::vector<std::string> product;
    product.reserve(names.size() * numbers.size());
    for (const auto& name : names) {
      for (const auto& number : numbers) product.push_back(name + number);
    }
    names = std::move(product);
    item.remove_prefix(close + 1);
  }
  if (out.size() + names.size() > kMaxNames) {
    throw std::invalid_argument("bad node list '" + std::string(whole) + "': too many names");
  }
  for (auto& name : names) out.push_back(std::move(name));
}

}  // namespace

std::string compress_nodelist(const std::vector<std::string>& names) {
  struct Item {
    std::string_view standalone;  // a name without a number, printed as is
    Group group;
  };
  std::vector<Item> items;
  for (const auto& full : names) {
    const SplitName name = split_name(full);
    if (name.digits.empty()) {
      items.push_back({full, {}});
    } else if (!items.empty() && items.back().group.accepts(name)) {
      items.back().group.add(name);
    } else {
      Group group;
      group.prefix = name.prefix;
      group.add(name);
      items.push_back({{}, std::move(group)});
    }
  }
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out +=
        items[i].group.numbers.empty() ? std::string(items[i].standalone) : items[i].group.render();
  }
  return out;
}

void sort_nodelist(std::vector<std::string>& names) {
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const SplitName x = split_name(a);
    const SplitName y = split_name(b);
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    if (x.digits.empty() != y.digits.empty()) return x.digits.empty();
    if (x.number != y.number) return x.number < y.number;
    return a < b;
  });
}

std::string compress_sorted_nodelist(std::vector<std::string> names) {
  sort_nodelist(names);
  return compress_nodelist(names);
}

std::vector<std::string> expand_nodelist(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      const std::string_view item = text.substr(start, i - start);
      if (item.empty()) {
        throw std::invalid_argument("bad node list '" + std::string(text) + "': empty name");
      }
      expand_item(item, text, out);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace sched::tasks
