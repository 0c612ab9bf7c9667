#include "sched/constraints.hpp"

#include <algorithm>

namespace sched {

bool is_allowed_size(NodeConstraint constraint, int nodes) {
  if (nodes < 1) return false;
  switch (constraint) {
    case NodeConstraint::None:
      return true;
    case NodeConstraint::Pof2:
      return (nodes & (nodes - 1)) == 0;
    case NodeConstraint::Even:
      return nodes % 2 == 0;
    case NodeConstraint::Odd:
      return nodes % 2 == 1;
    case NodeConstraint::Ncube: {
      int root = 1;
      while (root * root * root < nodes) ++root;
      return root * root * root == nodes;
    }
  }
  return false;
}

std::vector<int> allowed_sizes(NodeConstraint constraint, int lo, int hi) {
  std::vector<int> sizes;
  for (int n = std::max(lo, 1); n <= hi; ++n) {
    if (is_allowed_size(constraint, n)) sizes.push_back(n);
  }
  return sizes;
}

std::optional<int> highest_allowed_at_most(NodeConstraint constraint, int lo, int hi, int bound) {
  for (int n = std::min(hi, bound); n >= std::max(lo, 1); --n) {
    if (is_allowed_size(constraint, n)) return n;
  }
  return std::nullopt;
}

std::optional<int> lowest_allowed_at_least(NodeConstraint constraint, int lo, int hi, int bound) {
  for (int n = std::max({lo, bound, 1}); n <= hi; ++n) {
    if (is_allowed_size(constraint, n)) return n;
  }
  return std::nullopt;
}

std::optional<int> shrink_target(NodeConstraint constraint, int lo, int hi, int current,
                                 int needed) {
  if (needed < 1) return std::nullopt;
  if (auto covering = highest_allowed_at_most(constraint, lo, hi, current - needed)) {
    return covering;
  }
  auto smallest = lowest_allowed_at_least(constraint, lo, hi, 1);
  if (smallest && *smallest < current) return smallest;
  return std::nullopt;
}

}  // namespace sched
