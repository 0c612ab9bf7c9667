// The simple PMI-1 wire format (MPICH's src/pmi "simple" client over PMI_FD):
// one command per line, "cmd=NAME key=value key=value\n", words separated by
// spaces. Values carry no spaces (the client encodes what it puts).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sched::pmi {

struct Command {
  std::string name;                                       // the value of cmd=
  std::vector<std::pair<std::string, std::string>> args;  // the other words, in order

  // The value of `key`, or nothing.
  const std::string* find(std::string_view key) const;
};

// Parses one line without its newline. Malformed (empty, no cmd= first, a
// word without '=', an empty key): nothing, and *error says why.
std::optional<Command> parse(std::string_view line, std::string* error);

// "cmd=NAME k=v ...\n". Blanks and newlines (and '=' in keys) become '_' so that
// a reply always parses (messages are free text).
std::string format(const Command& command);

// A whole line can be this long at most; a longer one is a protocol error.
inline constexpr std::size_t kMaxLine = 64 * 1024;

}  // namespace sched::pmi
