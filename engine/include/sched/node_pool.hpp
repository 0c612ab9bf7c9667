// Spare nodes of a node-based container (std::map, std::set,
// std::unordered_map): what one entry let go, the next one takes, so that a
// container whose members come and go (the running jobs, the pending queue)
// stops allocating once it has held its most (issue 15: a malloc and a free
// per job and container).
#pragma once

#include <utility>
#include <vector>

namespace sched {

template <typename Container>
class NodePool {
 public:
  using Node = typename Container::node_type;

  // Keeps `node` (from Container::extract) for a later entry; an empty
  // handle is nothing to keep.
  void keep(Node&& node) {
    if (!node.empty()) spare_.push_back(std::move(node));
  }
  // A kept node, or an empty handle when there is none.
  Node take() {
    if (spare_.empty()) return Node{};
    Node node = std::move(spare_.back());
    spare_.pop_back();
    return node;
  }

 private:
  std::vector<Node> spare_;
};

// map.try_emplace(key, value), in a kept node when there is one: the entry
// and whether it was inserted (false: the key was there, left unchanged).
template <typename Map, typename Key, typename Value>
std::pair<typename Map::iterator, bool> pooled_emplace(Map& map, NodePool<Map>& pool, Key&& key,
                                                       Value&& value) {
  typename Map::node_type node = pool.take();
  if (node.empty()) return map.try_emplace(std::forward<Key>(key), std::forward<Value>(value));
  node.key() = std::forward<Key>(key);
  node.mapped() = std::forward<Value>(value);
  auto result = map.insert(std::move(node));
  if (!result.inserted) pool.keep(std::move(result.node));
  return {result.position, result.inserted};
}

// set.insert(value), in a kept node when there is one.
template <typename Set, typename Value>
std::pair<typename Set::iterator, bool> pooled_insert(Set& set, NodePool<Set>& pool,
                                                      Value&& value) {
  typename Set::node_type node = pool.take();
  if (node.empty()) return set.insert(std::forward<Value>(value));
  node.value() = std::forward<Value>(value);
  auto result = set.insert(std::move(node));
  if (!result.inserted) pool.keep(std::move(result.node));
  return {result.position, result.inserted};
}

}  // namespace sched
