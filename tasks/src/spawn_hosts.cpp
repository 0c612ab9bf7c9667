#include "sched/tasks/spawn_hosts.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace sched::tasks {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::vector<std::string> spawn_hosts(std::string_view text, int children) {
  if (children < 1) throw std::invalid_argument("a spawn needs at least one child");
  std::vector<std::string> per_child;
  bool counted = false;
  for (std::string_view part : split(text, ',')) {
    std::string_view name = part;
    int count = 1;
    if (const std::size_t colon = part.find(':'); colon != std::string_view::npos) {
      name = part.substr(0, colon);
      const std::string_view digits = part.substr(colon + 1);
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
          count < 1) {
        throw std::invalid_argument("host '" + std::string(part) + "': the count after ':' is " +
                                    "not a number from 1 up");
      }
      counted = true;
    }
    if (name.empty())
      throw std::invalid_argument("host list '" + std::string(text) + "' has an " + "empty name");
    if (static_cast<int>(per_child.size()) + count > children) {
      throw std::invalid_argument("host list '" + std::string(text) + "' names more than the " +
                                  std::to_string(children) + " children asked for");
    }
    per_child.insert(per_child.end(), static_cast<std::size_t>(count), std::string(name));
  }
  if (static_cast<int>(per_child.size()) == children) return per_child;
  std::vector<std::string> distinct = per_child;
  std::sort(distinct.begin(), distinct.end());
  const bool unique = std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end();
  if (counted || !unique) {
    throw std::invalid_argument("host list '" + std::string(text) + "' names " +
                                std::to_string(per_child.size()) + " children; " +
                                std::to_string(children) + " were asked for");
  }
  // Distinct names: the children spread over them, a block each.
  std::vector<std::string> spread;
  const int nodes = static_cast<int>(per_child.size());
  for (const TaskPlace& place : place_tasks(children, nodes, Distribution::Block)) {
    spread.push_back(per_child[static_cast<std::size_t>(place.node)]);
  }
  return spread;
}

std::optional<SpawnLayout> spawn_layout(const std::vector<std::string>& per_child) {
  if (per_child.empty()) return std::nullopt;
  SpawnLayout layout;
  for (const std::string& node : per_child) {
    if (std::find(layout.nodes.begin(), layout.nodes.end(), node) == layout.nodes.end()) {
      layout.nodes.push_back(node);
    }
  }
  const int tasks = static_cast<int>(per_child.size());
  const int nodes = static_cast<int>(layout.nodes.size());
  for (const Distribution how : {Distribution::Block, Distribution::Cyclic}) {
    const std::vector<TaskPlace> places = place_tasks(tasks, nodes, how);
    bool same = static_cast<int>(places.size()) == tasks;
    for (int i = 0; same && i < tasks; ++i) {
      same = layout.nodes[static_cast<std::size_t>(places[static_cast<std::size_t>(i)].node)] ==
             per_child[static_cast<std::size_t>(i)];
    }
    if (same) {
      layout.distribution = how;
      return layout;
    }
  }
  return std::nullopt;
}

}  // namespace sched::tasks
