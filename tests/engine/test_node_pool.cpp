// NodePool (issue 15): a node let go by one entry is taken by the next, and
// the containers behave as with plain emplace, insert and erase.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "sched/node_pool.hpp"

namespace sched {
namespace {

TEST(NodePool, MapReusesTheNodeOfAnErasedEntry) {
  std::map<int, int> map;
  NodePool<std::map<int, int>> pool;
  const auto [first, added] = pooled_emplace(map, pool, 1, 10);
  ASSERT_TRUE(added);
  const int* before = &first->second;
  pool.keep(map.extract(1));
  EXPECT_TRUE(map.empty());
  const auto [second, added_again] = pooled_emplace(map, pool, 7, 70);
  ASSERT_TRUE(added_again);
  EXPECT_EQ(&second->second, before);  // the same node, with the new entry
  EXPECT_EQ(map.at(7), 70);
  EXPECT_EQ(map.count(1), 0U);
}

TEST(NodePool, AnExistingKeyIsLeftAloneAndTheNodeKept) {
  std::unordered_map<int, std::unique_ptr<int>> map;
  NodePool<std::unordered_map<int, std::unique_ptr<int>>> pool;
  pooled_emplace(map, pool, 1, std::make_unique<int>(1));
  pooled_emplace(map, pool, 2, std::make_unique<int>(2));
  auto node = map.extract(2);
  node.mapped().reset();
  pool.keep(std::move(node));
  const auto [it, added] = pooled_emplace(map, pool, 1, std::make_unique<int>(99));
  EXPECT_FALSE(added);
  EXPECT_EQ(*it->second, 1);  // unchanged, as try_emplace leaves it
  // The node went back to the pool: the next new key takes it.
  const auto [it3, added3] = pooled_emplace(map, pool, 3, std::make_unique<int>(3));
  EXPECT_TRUE(added3);
  EXPECT_EQ(*it3->second, 3);
  EXPECT_EQ(map.size(), 2U);
  EXPECT_TRUE(pool.take().empty());
}

TEST(NodePool, SetInsertsInOrderWithKeptNodes) {
  std::set<int> set;
  NodePool<std::set<int>> pool;
  for (int i : {5, 3, 9}) pooled_insert(set, pool, i);
  pool.keep(set.extract(3));
  pool.keep(set.extract(4));  // not there: an empty handle, nothing kept
  EXPECT_FALSE(pooled_insert(set, pool, 9).second);
  EXPECT_TRUE(pooled_insert(set, pool, 1).second);
  EXPECT_TRUE(pooled_insert(set, pool, 7).second);
  EXPECT_EQ(set, (std::set<int>{1, 5, 7, 9}));
}

}  // namespace
}  // namespace sched
