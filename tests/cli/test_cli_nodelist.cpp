// Slurm-style host lists: compress_nodelist and expand_nodelist, both ways.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nodelist.hpp"

namespace sched::cli {
namespace {

using Names = std::vector<std::string>;

Names numbered(const std::string& prefix, int first, int last, int width = 0) {
  Names out;
  for (int n = first; n <= last; ++n) {
    std::string digits = std::to_string(n);
    if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
    out.push_back(prefix + digits);
  }
  return out;
}

TEST(CliNodelist, CompressesRunsAndGaps) {
  EXPECT_EQ(compress_nodelist({"n1", "n2", "n3", "n5"}), "n[1-3,5]");
  EXPECT_EQ(compress_nodelist({"n1", "n3", "n5"}), "n[1,3,5]");
  EXPECT_EQ(compress_nodelist(numbered("n", 1, 100)), "n[1-100]");
}

TEST(CliNodelist, KeepsZeroPadding) {
  EXPECT_EQ(compress_nodelist(numbered("n", 1, 10, 3)), "n[001-010]");
  EXPECT_EQ(compress_nodelist({"n08", "n09", "n10"}), "n[08-10]") << "10 prints as 10 in width 2";
  EXPECT_EQ(compress_nodelist({"n9", "n10"}), "n[9-10]") << "unpadded numbers grow freely";
  EXPECT_EQ(compress_nodelist({"n1", "n01"}), "n1,n01") << "different names, not one range";
  EXPECT_EQ(compress_nodelist({"n99", "n100"}), "n[99-100]");
  EXPECT_EQ(compress_nodelist({"n098", "n099", "n100"}), "n[098-100]");
  EXPECT_EQ(compress_nodelist({"n09", "n10", "n100"}), "n[09-10],n100")
      << "100 does not print in width 2";
  EXPECT_EQ(compress_nodelist({"n10", "n11", "n09"}), "n[10-11,09]");
  EXPECT_EQ(compress_nodelist({"n100", "n09"}), "n100,n09");
}

TEST(CliNodelist, SeveralPrefixes) {
  EXPECT_EQ(compress_nodelist({"n01", "n02", "n03", "n04", "gpu1"}), "n[01-04],gpu1");
  EXPECT_EQ(compress_nodelist({"a1", "a2", "b1", "b2"}), "a[1-2],b[1-2]");
  EXPECT_EQ(compress_nodelist({"rack1-n1", "rack1-n2", "rack2-n1"}), "rack1-n[1-2],rack2-n1");
}

TEST(CliNodelist, PlainAndSingleNames) {
  EXPECT_EQ(compress_nodelist({}), "");
  EXPECT_EQ(compress_nodelist({"login"}), "login");
  EXPECT_EQ(compress_nodelist({"n7"}), "n7");
  EXPECT_EQ(compress_nodelist({"n007"}), "n007");
  EXPECT_EQ(compress_nodelist({"gpu", "n1"}), "gpu,n1");
  EXPECT_EQ(compress_nodelist({"gpu", "1", "2"}), "gpu,[1-2]");
  EXPECT_EQ(compress_nodelist({"n1a", "n1b"}), "n1a,n1b") << "only trailing numbers count";
  const std::string huge = "node1234567890123456789012";
  EXPECT_EQ(compress_nodelist({huge, huge}), huge + "," + huge) << "too long to be a number";
}

TEST(CliNodelist, KeepsOrderSoTheLeaderStaysFirst) {
  EXPECT_EQ(compress_nodelist({"n3", "n1", "n2"}), "n[3,1-2]");
  EXPECT_EQ(compress_nodelist({"n1", "gpu1", "n2"}), "n1,gpu1,n2");
  EXPECT_EQ(compress_nodelist({"n1", "n1"}), "n[1,1]");
}

TEST(CliNodelist, Expands) {
  EXPECT_EQ(expand_nodelist("n[1-3,5],gpu1"), (Names{"n1", "n2", "n3", "n5", "gpu1"}));
  EXPECT_EQ(expand_nodelist("n[001-010]"), numbered("n", 1, 10, 3));
  EXPECT_EQ(expand_nodelist("n[9-10]"), (Names{"n9", "n10"}));
  EXPECT_EQ(expand_nodelist("n[08-10]"), (Names{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_nodelist("n5"), (Names{"n5"}));
  EXPECT_EQ(expand_nodelist("n[5]"), (Names{"n5"}));
  EXPECT_EQ(expand_nodelist("a,b"), (Names{"a", "b"}));
  EXPECT_EQ(expand_nodelist("[1-3]"), (Names{"1", "2", "3"}));
  EXPECT_EQ(expand_nodelist(""), Names{});
  EXPECT_EQ(expand_nodelist("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_nodelist("r[1-2]-x"), (Names{"r1-x", "r2-x"}));
}

TEST(CliNodelist, RejectsMalformedLists) {
  for (const char* text :
       {"n[1-3", "n1-3]", "n[3-1]", "n[a-b]", "n[]", "n[1-]", "n[-3]", "n[1,,2]", "n1,,n2", ",n1",
        "n1,", "n[1-3]]", "n[[1]]", "n[1-1000000]", "n[1-400]m[1-400]"}) {
    EXPECT_THROW(expand_nodelist(text), std::invalid_argument) << text;
  }
  try {
    expand_nodelist("n[3-1]");
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "bad node list 'n[3-1]': range '3-1' runs backwards");
  }
}

TEST(CliNodelist, RoundTripsBothWays) {
  for (const Names& names : std::vector<Names>{
           {},
           {"n1", "n2", "n3", "n5"},
           numbered("n", 1, 10, 3),
           {"n01", "n02", "n03", "n04", "gpu1"},
           {"n3", "n1", "n2", "gpu1", "gpu2", "login"},
           {"n9", "n10", "n11", "n010", "n011"},
           {"n1", "n1", "n01", "x", "7", "8"},
       }) {
    EXPECT_EQ(expand_nodelist(compress_nodelist(names)), names) << compress_nodelist(names);
  }
  for (const char* text : {"n[1-3,5]", "n[001-010]", "n[01-04],gpu1", "n[9-10]", "n[3,1-2],gpu1"}) {
    EXPECT_EQ(compress_nodelist(expand_nodelist(text)), text);
  }
}

TEST(NodeList, SortedCompressionCountsAsPeopleDo) {
  EXPECT_EQ(compress_sorted_nodelist({"n4", "n2", "n3", "n1"}), "n[1-4]");
  EXPECT_EQ(compress_nodelist({"n4", "n2", "n3", "n1"}), "n[4,2-3,1]") << "unsorted keeps order";
  EXPECT_EQ(compress_sorted_nodelist({"n10", "n9", "gpu2", "n1", "gpu1"}), "gpu[1-2],n[1,9-10]");
  std::vector<std::string> names = {"n10", "login", "n2", "n02", "7", "n"};
  sort_nodelist(names);
  EXPECT_EQ(names, (std::vector<std::string>{"7", "login", "n", "n02", "n2", "n10"}));
}

}  // namespace
}  // namespace sched::cli
