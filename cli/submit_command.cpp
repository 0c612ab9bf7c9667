// `sched submit [options] SCRIPT` (or --wrap CMD): the script's #SCHED /
// #SBATCH directives, overridden option by option by the command line.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "connection.hpp"
#include "job_commands.hpp"
#include "submission.hpp"

namespace sched::cli {
namespace {

std::string read_script(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the script " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// sbatch's habit: with no script file, the script comes from standard
// input, unless that is a terminal (a user who forgot the file name).
std::string read_stdin_script() {
  if (::isatty(STDIN_FILENO)) {
    throw std::runtime_error(
        "give a script file, --wrap COMMAND, or a script on standard input (not a terminal)");
  }
  std::stringstream text;
  text << std::cin.rdbuf();
  if (text.str().empty()) throw std::runtime_error("the script from standard input is empty");
  return text.str();
}

struct SubmitArgs {
  std::string wrap;
  bool json = false;
  bool parsable = false;
  int retries = 2;
  SubmissionArgs options;
};

}  // namespace

void add_submit_command(CLI::App& app) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "submit",
      "Submit a batch script (like sbatch): sched submit [OPTIONS] [SCRIPT [ARGS...]]; the "
      "script (#SCHED or #SBATCH directives) from standard input when no SCRIPT is given; "
      "everything after SCRIPT is the script's arguments");
  // As sbatch: the first word that is not an option is the script, and all
  // after it are the script's ("$1".."$N"), options or not.
  // Falling through to `sched`'s own options would hand the script's words
  // to `sched` instead; the connection options are submit's own instead.
  cmd->prefix_command();
  cmd->fallthrough(false);
  add_connection_options(*cmd);
  cmd->add_option("--wrap", args->wrap, "Submit this command line as a one-line script");
  cmd->add_flag("--json", args->json, "Print {\"id\": N}");
  cmd->add_flag("--parsable", args->parsable, "Print only the job id");
  cmd->add_option("--retries", args->retries,
                  "Times to send the submission again when schedd does not answer in time "
                  "(each within --timeout; a retry never makes a second job)")
      ->check(non_negative_number())
      ->capture_default_str();
  // The options the directives know, with the same names and rules.
  add_submission_options(*cmd, args->options);
  cmd->callback([args, cmd] {
    run_command([&] {
      std::vector<std::string> words = cmd->remaining();
      if (!words.empty() && !args->wrap.empty()) {
        throw std::runtime_error("give a script file or --wrap COMMAND (not both)");
      }
      const std::string script_path = words.empty() ? "" : words.front();
      std::string script;
      if (!args->wrap.empty()) {
        script = "#!/bin/sh\n" + args->wrap + "\n";
      } else if (!script_path.empty()) {
        script = read_script(script_path);
      } else {
        script = read_stdin_script();
      }
      JobSpec spec = submission_spec(script, args->options);
      if (!words.empty()) spec.extra.edit().args.assign(words.begin() + 1, words.end());
      if (spec.name.empty()) {
        spec.name = !args->wrap.empty()   ? "wrap"
                    : script_path.empty() ? "stdin"
                                          : std::filesystem::path(script_path).filename().string();
      }
      const std::int64_t id = send_submission(spec, args->retries);
      if (args->json) {
        std::cout << nlohmann::json{{"id", id}}.dump() << "\n";
      } else if (args->parsable) {
        std::cout << id << "\n";
      } else {
        std::cout << "Submitted batch job " << id << "\n";
      }
    });
  });
}

}  // namespace sched::cli
