#include "sched/proto/authorized_keys.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sched/proto/curve.hpp"

namespace sched::proto {
namespace fs = std::filesystem;
namespace {

// A bound on one line's names: a typo such as n[1-1000000000] must not eat
// schedd's memory.
constexpr std::size_t kMaxNames = 100000;

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

long parse_bound(std::string_view digits, std::string_view item) {
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    throw std::runtime_error("'" + std::string(item) + "': a range bound must be a number");
  }
  return std::stol(std::string(digits));
}

// Splits on commas that are not inside brackets.
std::vector<std::string_view> split_items(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '[') ++depth;
    if (list[i] == ']') --depth;
    if (list[i] == ',' && depth == 0) {
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(list.substr(start));
  return items;
}

void expand_item(std::string_view item, std::set<std::string>& out) {
  const auto open = item.find('[');
  if (open == std::string_view::npos) {
    if (!valid_name(item)) {
      throw std::runtime_error("'" + std::string(item) +
                               "' is not a node name (letters, digits, - _ . only)");
    }
    out.insert(std::string(item));
    return;
  }
  const auto close = item.find(']', open);
  if (close == std::string_view::npos || item.find('[', open + 1) < close ||
      item.find_first_of("[]", close + 1) != std::string_view::npos) {
    throw std::runtime_error("'" + std::string(item) +
                             "': one range in brackets, n[1-4], expected");
  }
  const std::string_view prefix = item.substr(0, open);
  const std::string_view suffix = item.substr(close + 1);
  if ((!prefix.empty() && !valid_name(prefix)) || (!suffix.empty() && !valid_name(suffix))) {
    throw std::runtime_error("'" + std::string(item) + "' is not a node name pattern");
  }
  std::string_view ranges = item.substr(open + 1, close - open - 1);
  if (ranges.empty()) throw std::runtime_error("'" + std::string(item) + "': empty brackets");
  std::size_t start = 0;
  while (start <= ranges.size()) {
    auto comma = ranges.find(',', start);
    if (comma == std::string_view::npos) comma = ranges.size();
    const std::string_view range = ranges.substr(start, comma - start);
    const auto dash = range.find('-');
    const std::string_view low_text = range.substr(0, dash);
    const std::string_view high_text =
        dash == std::string_view::npos ? low_text : range.substr(dash + 1);
    const long low = parse_bound(low_text, item);
    const long high = parse_bound(high_text, item);
    if (high < low) {
      throw std::runtime_error("'" + std::string(item) + "': range " + std::string(range) +
                               " runs backwards");
    }
    if (static_cast<std::size_t>(high - low) + out.size() >= kMaxNames) {
      throw std::runtime_error("'" + std::string(item) + "': more than " +
                               std::to_string(kMaxNames) + " names");
    }
    const std::size_t width = low_text.size() > 1 && low_text[0] == '0' ? low_text.size() : 0;
    for (long n = low; n <= high; ++n) {
      std::string number = std::to_string(n);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      out.insert(std::string(prefix) + number + std::string(suffix));
    }
    start = comma + 1;
  }
}

}  // namespace

std::set<std::string> expand_node_list(std::string_view list) {
  std::set<std::string> names;
  for (std::string_view item : split_items(list)) {
    if (item.empty()) throw std::runtime_error("an empty name in '" + std::string(list) + "'");
    expand_item(item, names);
  }
  return names;
}

AuthorizedAgents AuthorizedAgents::parse(std::string_view text, const std::string& file) {
  AuthorizedAgents out;
  std::map<std::string, std::pair<std::string, int>> owner;  // node → key, line
  std::map<std::string, int> key_line;
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const auto where = file + ":" + std::to_string(number) + ": ";
    std::istringstream words(line);
    std::string key;
    std::string nodes;
    std::string extra;
    if (!(words >> key)) continue;  // blank
    // # is a Z85 character too: a comment is a # line that is no key.
    if (key[0] == '#' && !curve::is_key(key)) continue;
    if (!curve::is_key(key)) {
      throw std::runtime_error(where + "'" + key.substr(0, 48) +
                               "' is not a CURVE public key (40 characters of Z85 text)");
    }
    if (!(words >> nodes) || nodes[0] == '#') {
      throw std::runtime_error(where + "the key names no node (<key> <nodes> expected)");
    }
    if (words >> extra && extra[0] != '#') {
      throw std::runtime_error(where + "'" + extra +
                               "' after the node list (no spaces inside it: n1,n2 or n[1-2])");
    }
    if (auto seen = key_line.find(key); seen != key_line.end()) {
      throw std::runtime_error(where + "the key is listed already on line " +
                               std::to_string(seen->second));
    }
    std::set<std::string> names;
    try {
      names = expand_node_list(nodes);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + e.what());
    }
    for (const std::string& name : names) {
      const auto [it, fresh] = owner.emplace(name, std::make_pair(key, number));
      if (!fresh) {
        throw std::runtime_error(where + "node " + name + " belongs to the key of line " +
                                 std::to_string(it->second.second) + " already");
      }
    }
    key_line[key] = number;
    out.nodes_[key] = std::move(names);
    out.texts_[key] = nodes;
  }
  return out;
}

AuthorizedAgents AuthorizedAgents::load(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path.string() + ": cannot read the authorised agent keys");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path.string());
}

bool AuthorizedAgents::allows(const std::string& key, const std::string& node) const {
  const auto it = nodes_.find(key);
  return it != nodes_.end() && it->second.count(node) > 0;
}

std::string AuthorizedAgents::nodes_text(const std::string& key) const {
  const auto it = texts_.find(key);
  return it == texts_.end() ? std::string() : it->second;
}

}  // namespace sched::proto
