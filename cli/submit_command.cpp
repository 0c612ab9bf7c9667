// `sched submit [options] SCRIPT` (or --wrap CMD): the script's #SCHED /
// #SBATCH directives, overridden option by option by the command line.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string_view>

#include "connection.hpp"
#include "job_commands.hpp"
#include "job_script.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/env.hpp"
#include "submit_options.hpp"

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

// The environment `sched submit` runs in, for --export.
EnvList submitting_environment() {
  EnvList env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    env.emplace_back(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return env;
}

std::string absolute_from(const std::string& workdir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(workdir) / path).string();
}

// A random id for one submission, the same on each of its retries: schedd
// answers a retry with the first job instead of a new one.
std::string new_request_id() {
  std::random_device random;
  std::ostringstream id;
  id << std::hex << std::setfill('0');
  for (int i = 0; i < 4; ++i) id << std::setw(8) << static_cast<std::uint32_t>(random());
  return id.str();
}

struct SubmitArgs {
  std::string wrap;
  bool json = false;
  bool parsable = false;
  int retries = 2;
  // Every option of the submit table, by long name, as given.
  std::map<std::string, std::vector<std::string>> values;
  std::map<std::string, bool> flags;
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
  for (const OptionInfo& option : submit_option_table()) {
    if (option.slurm_only) continue;
    std::string names = "--" + std::string(option.name);
    if (option.short_name != 0) names = std::string("-") + option.short_name + "," + names;
    const std::string key(option.name);
    if (option.value == ValueKind::None) {
      cmd->add_flag(names, args->flags[key], std::string(option.help));
    } else {
      cmd->add_option(names, args->values[key], std::string(option.help))->allow_extra_args(false);
    }
  }
  cmd->callback([args, cmd] {
    run_command([&] {
      std::vector<std::string> words = cmd->remaining();
      if (!words.empty() && !args->wrap.empty()) {
        throw std::runtime_error("give a script file or --wrap COMMAND (not both)");
      }
      const std::string script_path = words.empty() ? "" : words.front();
      const std::vector<std::string> script_args =
          words.empty() ? std::vector<std::string>{}
                        : std::vector<std::string>(words.begin() + 1, words.end());
      std::string script;
      if (!args->wrap.empty()) {
        script = "#!/bin/sh\n" + args->wrap + "\n";
      } else if (!script_path.empty()) {
        script = read_script(script_path);
      } else {
        script = read_stdin_script();
      }
      SubmitOptions command_line;
      for (const auto& [name, given] : args->flags) {
        if (!given) continue;
        if (auto error = apply_option(command_line, name, std::nullopt)) {
          throw std::runtime_error(*error);
        }
      }
      for (const auto& [name, values] : args->values) {
        for (const std::string& value : values) {
          if (auto error = apply_option(command_line, name, value)) {
            throw std::runtime_error(*error);
          }
        }
      }
      Submission submission = submission_from_script(script, command_line, submitting_environment(),
                                                     SystemClock().now());
      for (const std::string& warning : submission.warnings) {
        std::cerr << "sched: warning: " << warning << "\n";
      }
      if (submission.error) throw std::runtime_error(*submission.error);
      JobSpec& spec = submission.spec;
      // No user: schedd takes the one the request's credential proves.
      spec.args = script_args;
      if (spec.name.empty()) {
        spec.name = !args->wrap.empty()   ? "wrap"
                    : script_path.empty() ? "stdin"
                                          : std::filesystem::path(script_path).filename().string();
      }
      // Relative folders are the submitter's, as sbatch has them.
      const auto cwd = std::filesystem::current_path();
      spec.workdir =
          spec.workdir.empty() ? cwd.string() : std::filesystem::absolute(spec.workdir).string();
      spec.output = absolute_from(spec.workdir, spec.output);
      spec.error = absolute_from(spec.workdir, spec.error);
      proto::SubmitRequest request;
      request.job = convert::spec_to_wire(spec);
      // schedd would refuse it too; said here with what to do about it (a
      // large environment under --export=ALL is the usual cause).
      if (auto error = convert::check_spec_text(request.job)) {
        throw std::runtime_error(
            "the job cannot be submitted: " + *error +
            (error->starts_with("job.env")
                 ? " (--export=ALL, the default, passes the whole submitting environment: use "
                   "--export=NONE or --export=NAME,... to pass less)"
                 : ""));
      }
      request.request_id = new_request_id();
      proto::SubmitReply reply;
      for (int attempt = 0;; ++attempt) {
        try {
          reply = client().call<proto::SubmitReply>(proto::type::kSubmit, request);
          break;
        } catch (const proto::TransportError& e) {
          if (attempt >= args->retries) throw;
          std::cerr << "sched: " << e.what() << "; sending the submission again\n";
        }
      }
      if (args->json) {
        std::cout << nlohmann::json{{"id", reply.id}}.dump() << "\n";
      } else if (args->parsable) {
        std::cout << reply.id << "\n";
      } else {
        std::cout << "Submitted batch job " << reply.id << "\n";
      }
    });
  });
}

}  // namespace sched::cli
