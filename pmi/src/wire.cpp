#include "sched/pmi/wire.hpp"

namespace sched::pmi {

const std::string* Command::find(std::string_view key) const {
  for (const auto& [k, v] : args) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<Command> parse(std::string_view line, std::string* error) {
  const auto fail = [&](std::string why) -> std::optional<Command> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxLine) return fail("line too long");
  std::vector<std::pair<std::string, std::string>> words;
  std::size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ' || line[pos] == '\t') {
      ++pos;
      continue;
    }
    std::size_t end = line.find_first_of(" \t", pos);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view word = line.substr(pos, end - pos);
    const auto eq = word.find('=');
    if (eq == std::string_view::npos) {
      return fail("'" + std::string(word.substr(0, 64)) + "' is not key=value");
    }
    if (eq == 0) return fail("a word has an empty key");
    words.emplace_back(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    pos = end;
  }
  if (words.empty()) return fail("empty command");
  if (words.front().first != "cmd") return fail("a command starts with cmd=");
  if (words.front().second.empty()) return fail("cmd= names no command");
  Command command;
  command.name = std::move(words.front().second);
  command.args.assign(std::make_move_iterator(words.begin() + 1),
                      std::make_move_iterator(words.end()));
  return command;
}

std::string format(const Command& command) {
  // A value may hold '=' (the parser splits a word at its first one).
  const auto clean = [](std::string text, bool key) {
    for (char& c : text) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || (key && c == '=')) c = '_';
    }
    return text;
  };
  std::string line = "cmd=" + clean(command.name, false);
  for (const auto& [key, value] : command.args) {
    line += " " + clean(key, true) + "=" + clean(value, false);
  }
  line += "\n";
  return line;
}

}  // namespace sched::pmi
