// issue 16 item 2: the process map an agent's PMIx server registers for an
// --mpi=pmix step, and the fence data's text form in pmi.fence.
#include <gtest/gtest.h>

#include <string>

#include "sched/agent/pmix_map.hpp"

namespace sched::agent {
namespace {

TEST(PmixMap, BlockPutsConsecutiveRanksOnANode) {
  const auto map = make_pmix_map(8, {"n1", "n2", "n3", "n4"}, "block");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->node_of_rank, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(map->ppn(), "0,1;2,3;4,5;6,7");
  EXPECT_EQ(map->node_list(), "n1,n2,n3,n4");
  EXPECT_EQ(map->peers(2), "4,5");
  EXPECT_EQ(map->ranks_on(3), (std::vector<int>{6, 7}));
  EXPECT_EQ(map->local_rank(5), 1);
  EXPECT_EQ(map->local_rank(4), 0);
}

TEST(PmixMap, CyclicDealsRanksRoundAndUnevenCountsGoFirstNodesFirst) {
  const auto cyclic = make_pmix_map(6, {"a", "b", "c", "d"}, "cyclic");
  ASSERT_TRUE(cyclic);
  EXPECT_EQ(cyclic->ppn(), "0,4;1,5;2;3");
  EXPECT_EQ(cyclic->local_rank(5), 1);
  EXPECT_EQ(cyclic->peers(3), "3");
  const auto block = make_pmix_map(5, {"a", "b"}, "block");
  ASSERT_TRUE(block);
  EXPECT_EQ(block->ppn(), "0,1,2;3,4");
  EXPECT_EQ(block->local_rank(-1), -1);
  EXPECT_EQ(block->local_rank(5), -1);
}

TEST(PmixMap, ALayoutTasksCannotMakeIsRefused) {
  EXPECT_FALSE(make_pmix_map(2, {"a", "b", "c"}, "block"));  // fewer ranks than nodes
  EXPECT_FALSE(make_pmix_map(4, {"a", "b"}, "plane"));
  EXPECT_FALSE(make_pmix_map(4, {}, "block"));
}

TEST(PmixFenceBlob, AnyBytesGoThereAndBackAsText) {
  for (std::size_t size = 0; size < 11; ++size) {
    std::string bytes;
    for (std::size_t i = 0; i < size; ++i) bytes.push_back(static_cast<char>((i * 97 + 3) % 256));
    bytes += std::string("\0\xff", size % 3 == 0 ? 2 : 0);
    const std::string text = encode_fence_blob(bytes);
    EXPECT_EQ(text.rfind(std::to_string(bytes.size()) + ":", 0), 0u) << text;
    for (const char c : text) EXPECT_TRUE(c >= 0x21 && c < 0x7f) << text;  // printable, UTF-8
    const auto back = decode_fence_blob(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(*back, bytes);
  }
}

TEST(PmixFenceBlob, TextThatIsNotABlobIsRefused) {
  EXPECT_FALSE(decode_fence_blob(""));
  EXPECT_FALSE(decode_fence_blob(":"));
  EXPECT_FALSE(decode_fence_blob("x:abcde"));
  EXPECT_FALSE(decode_fence_blob("4:abcd"));                  // not whole Z85 groups
  EXPECT_FALSE(decode_fence_blob("9:0rr910rr91"));            // length and text disagree
  EXPECT_FALSE(decode_fence_blob("4:\x01\x02\x03\x04\x05"));  // not Z85 characters
  EXPECT_TRUE(decode_fence_blob("0:"));
}

}  // namespace
}  // namespace sched::agent
