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
  std::string script_path;
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
  CLI::App* cmd = app.add_subcommand("submit", "Submit a batch script (like sbatch)");
  cmd->add_option("script", args->script_path, "The batch script (#SCHED or #SBATCH directives)");
  cmd->add_option("--wrap", args->wrap, "Submit this command line as a one-line script");
  cmd->add_flag("--json", args->json, "Print {\"id\": N}");
  cmd->add_flag("--parsable", args->parsable, "Print only the job id");
  cmd->add_option("--retries", args->retries,
                  "Times to send the submission again when schedd does not answer in time "
                  "(each within --timeout; a retry never makes a second job)")
      ->check(CLI::NonNegativeNumber)
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
  cmd->callback([args] {
    run_command([&] {
      if (args->script_path.empty() == args->wrap.empty()) {
        throw std::runtime_error("give a script file or --wrap COMMAND (not both)");
      }
      const std::string script =
          args->wrap.empty() ? read_script(args->script_path) : "#!/bin/sh\n" + args->wrap + "\n";
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
      Submission submission = submission_from_script(script, command_line, SystemClock().now());
      for (const std::string& warning : submission.warnings) {
        std::cerr << "sched: warning: " << warning << "\n";
      }
      if (submission.error) throw std::runtime_error(*submission.error);
      JobSpec& spec = submission.spec;
      // No user: schedd takes the one the request's credential proves.
      if (spec.name.empty()) {
        spec.name = args->wrap.empty()
                        ? std::filesystem::path(args->script_path).filename().string()
                        : "wrap";
      }
      // Relative folders are the submitter's, as sbatch has them.
      const auto cwd = std::filesystem::current_path();
      spec.workdir =
          spec.workdir.empty() ? cwd.string() : std::filesystem::absolute(spec.workdir).string();
      if (!spec.output.empty() && std::filesystem::path(spec.output).is_relative()) {
        spec.output = (std::filesystem::path(spec.workdir) / spec.output).string();
      }
      proto::SubmitRequest request;
      request.job = convert::spec_to_wire(spec);
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
