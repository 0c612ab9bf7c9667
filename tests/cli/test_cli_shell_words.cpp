// Shell-like splitting of directive lines.
#include <gtest/gtest.h>

#include "shell_words.hpp"

namespace sched::cli {
namespace {

using Words = std::vector<std::string>;

Words split(std::string_view text) {
  ShellWords result = split_shell_words(text);
  EXPECT_FALSE(result.error) << text << ": " << result.error.value_or("");
  return result.words;
}

TEST(CliShellWords, SplitsOnBlanks) {
  EXPECT_EQ(split(" -N  4\t--time=10 "), (Words{"-N", "4", "--time=10"}));
  EXPECT_EQ(split(""), Words{});
  EXPECT_EQ(split("   "), Words{});
}

TEST(CliShellWords, DoubleQuotes) {
  EXPECT_EQ(split("--job-name=\"my job\""), (Words{"--job-name=my job"}));
  EXPECT_EQ(split(R"("a \"b\" \\ \$x \n")"), (Words{R"(a "b" \ $x \n)"}))
      << "only $ ` \" \\ are escaped inside double quotes";
  EXPECT_EQ(split(R"(-J "")"), (Words{"-J", ""})) << "an empty word";
}

TEST(CliShellWords, SingleQuotesAreLiteral) {
  EXPECT_EQ(split(R"(-J 'it is \ "so"')"), (Words{"-J", R"(it is \ "so")"}));
  EXPECT_EQ(split("''"), (Words{""}));
}

TEST(CliShellWords, PartsJoinIntoOneWord) {
  EXPECT_EQ(split(R"(a'b'"c"d)"), (Words{"abcd"}));
  EXPECT_EQ(split(R"(my\ job x)"), (Words{"my job", "x"})) << "backslash outside quotes";
}

TEST(CliShellWords, HashStartsACommentOnlyAtAWordStart) {
  EXPECT_EQ(split("-N 4 # four nodes"), (Words{"-N", "4"}));
  EXPECT_EQ(split("-J a#b"), (Words{"-J", "a#b"}));
  EXPECT_EQ(split("-J '#1'"), (Words{"-J", "#1"}));
}

TEST(CliShellWords, UnterminatedQuotesAreErrors) {
  EXPECT_EQ(split_shell_words("-J 'abc").error, "unterminated '...'");
  EXPECT_EQ(split_shell_words("-J \"abc").error, "unterminated \"...\"");
  EXPECT_EQ(split_shell_words(R"(-J "abc\")").error, "unterminated \"...\"");
}

}  // namespace
}  // namespace sched::cli
