// Splitting a directive line into words with the shell's quoting rules, so
// that `#SCHED --job-name="my job"` means what it would on a command line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::cli {

struct ShellWords {
  std::vector<std::string> words;
  std::optional<std::string> error;  // e.g. "unterminated \"...\""
};

// Whitespace separates words; '...' keeps everything literally; "..." keeps
// spaces and lets a backslash escape only $ ` " \ (as POSIX sh does); a
// backslash outside quotes escapes the next character; quoted and unquoted
// parts next to each other make one word (--name="a b" is one word), and ""
// is an empty word; an unquoted '#' that starts a word begins a comment.
// Nothing is expanded: no variables, globs or command substitution.
ShellWords split_shell_words(std::string_view text);

}  // namespace sched::cli
