#include <gtest/gtest.h>

#include "sched/pmi/process_mapping.hpp"
#include "sched/pmi/wire.hpp"

namespace sched::pmi {
namespace {

TEST(PmiWire, ParsesACommandAndItsArguments) {
  std::string why;
  const auto c = parse("cmd=put kvsname=kvs_1 key=a value=x=y", &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->name, "put");
  ASSERT_EQ(c->args.size(), 3u);
  ASSERT_NE(c->find("value"), nullptr);
  EXPECT_EQ(*c->find("value"), "x=y");  // split at the first '=' only
  EXPECT_EQ(c->find("missing"), nullptr);
}

TEST(PmiWire, ToleratesExtraBlanksAndCarriageReturn) {
  std::string why;
  const auto c = parse("  cmd=get_maxes   \r", &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->name, "get_maxes");
  EXPECT_TRUE(c->args.empty());
}

TEST(PmiWire, RefusesMalformedLinesWithAReason) {
  for (const char* bad : {"", "   ", "put key=a", "cmd=", "cmd=put =x", "key=a cmd=put",
                          "mcmd=spawn", "cmd=put novalue"}) {
    std::string why;
    EXPECT_FALSE(parse(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  EXPECT_FALSE(parse(std::string(kMaxLine + 1, 'a'), nullptr));
}

TEST(PmiWire, FormatsALineThatParsesBack) {
  const std::string line = format(Command{"get_result", {{"rc", "-1"}, {"msg", "key a b\nnot"}}});
  EXPECT_EQ(line, "cmd=get_result rc=-1 msg=key_a_b_not\n");
  const auto back = parse(line.substr(0, line.size() - 1), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back->find("msg"), "key_a_b_not");
  EXPECT_EQ(format(Command{"get_result", {{"value", "a=b"}}}), "cmd=get_result value=a=b\n");
}

TEST(PmiProcessMapping, DescribesBlockAndCyclicLayouts) {
  EXPECT_EQ(process_mapping({}), "");
  EXPECT_EQ(process_mapping({0, 0, 1, 1}), "(vector,(0,2,2))");
  EXPECT_EQ(process_mapping({0, 0, 0, 1, 1}), "(vector,(0,1,3),(1,1,2))");
  EXPECT_EQ(process_mapping({0, 1, 0, 1}), "(vector,(0,2,1),(0,2,1))");
  EXPECT_EQ(process_mapping({0}), "(vector,(0,1,1))");
}

}  // namespace
}  // namespace sched::pmi
