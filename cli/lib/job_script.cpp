#include "job_script.hpp"

#include <array>

#include "shell_words.hpp"

namespace sched::cli {
namespace {

// The directive word a line begins with, and its dialect.
std::optional<std::pair<std::string_view, Dialect>> directive_of(std::string_view line) {
  constexpr std::array<std::pair<std::string_view, Dialect>, 2> kPrefixes = {
      {{"#SCHED", Dialect::Sched}, {"#SBATCH", Dialect::Slurm}}};
  for (const auto& [prefix, dialect] : kPrefixes) {
    if (!line.starts_with(prefix)) continue;
    if (line.size() == prefix.size() || line[prefix.size()] == ' ' || line[prefix.size()] == '\t') {
      return std::pair{prefix, dialect};
    }
  }
  return std::nullopt;
}

}  // namespace

ScriptOptions parse_job_script(std::string_view text) {
  ScriptOptions out;
  bool in_header = true;
  int number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++number;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto directive = directive_of(line);
    if (!in_header) {
      if (directive) {
        out.options.warnings.push_back(where + std::string(directive->first) +
                                       " after the first command is ignored");
      }
      continue;
    }
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // blank
    if (line[first] != '#') {
      in_header = false;
      continue;
    }
    if (!directive) continue;  // a plain comment, or the #! line
    const ShellWords words = split_shell_words(line.substr(directive->first.size()));
    if (words.error) {
      out.error = where + *words.error;
      return out;
    }
    const std::size_t warnings_before = out.options.warnings.size();
    if (auto error = apply_arguments(out.options, words.words, directive->second)) {
      out.error = where + *error;
      return out;
    }
    for (std::size_t i = warnings_before; i < out.options.warnings.size(); ++i) {
      out.options.warnings[i].insert(0, where);
    }
  }
  return out;
}

Submission submission_from_script(std::string_view script, const SubmitOptions& command_line,
                                  const EnvList& submitting, double now) {
  ScriptOptions directives = parse_job_script(script);
  if (directives.error) {
    Submission failed;
    failed.error = std::move(directives.error);
    return failed;
  }
  return build_submission(merge(directives.options, command_line), std::string(script), submitting,
                          now);
}

}  // namespace sched::cli
