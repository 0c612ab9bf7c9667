// sbatch's filename patterns in -o/-e (convert::expand_output_pattern).
#include <gtest/gtest.h>

#include "sched/convert/output_pattern.hpp"

namespace sched::convert {
namespace {

OutputNames names() {
  OutputNames n;
  n.job = 42;
  n.name = "heat";
  n.user = "ada";
  n.node = "n7";
  return n;
}

TEST(OutputPattern, EachLetterAsSbatchHasIt) {
  EXPECT_EQ(expand_output_pattern("out-%j.txt", names()), "out-42.txt");
  EXPECT_EQ(expand_output_pattern("%x_%u_%N", names()), "heat_ada_n7");
  EXPECT_EQ(expand_output_pattern("100%% %j", names()), "100% 42");
  // Outside an array: %A is the job id, %a Slurm's NO_VAL - 1.
  EXPECT_EQ(expand_output_pattern("%A_%a", names()), "42_4294967294");
  OutputNames array = names();
  array.array_master = 40;
  array.array_index = 2;
  EXPECT_EQ(expand_output_pattern("out-%A_%a.txt", array), "out-40_2.txt");
  EXPECT_EQ(expand_output_pattern("plain.txt", names()), "plain.txt");
}

TEST(OutputPattern, WidthsZeroPadNumbersAndPadText) {
  EXPECT_EQ(expand_output_pattern("%5j", names()), "00042");
  EXPECT_EQ(expand_output_pattern("%1j", names()), "42") << "never cut";
  EXPECT_EQ(expand_output_pattern("%6x|", names()), "  heat|");
  EXPECT_EQ(expand_output_pattern("%3a", names()), "4294967294");
}

TEST(OutputPattern, UnknownLettersAndUnknownNodeStayAsWritten) {
  EXPECT_EQ(expand_output_pattern("%q%j%", names()), "%q42%");
  EXPECT_EQ(expand_output_pattern("%5", names()), "%5");
  OutputNames pending = names();
  pending.node.clear();
  EXPECT_EQ(expand_output_pattern("%N-%j", pending), "%N-42");
  EXPECT_EQ(expand_output_pattern("%99999999999999999999j", names()), "%99999999999999999999j")
      << "an absurd width is no width";
}

TEST(OutputPattern, ABackslashTurnsExpansionOff) {
  EXPECT_EQ(expand_output_pattern("out\\-%j.txt", names()), "out-%j.txt");
}

}  // namespace
}  // namespace sched::convert
