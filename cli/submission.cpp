#include "submission.hpp"

#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string_view>

#include "connection.hpp"
#include "job_script.hpp"
#include "program_name.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/env.hpp"
#include "submit_options.hpp"

extern char** environ;

namespace sched::cli {
namespace {

// The environment the command runs in, for --export.
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

}  // namespace

void add_submission_options(CLI::App& command, SubmissionArgs& args) {
  for (const OptionInfo& option : submit_option_table()) {
    if (option.slurm_only) continue;
    std::string names = "--" + std::string(option.name);
    if (option.short_name != 0) names = std::string("-") + option.short_name + "," + names;
    const std::string key(option.name);
    if (option.value == ValueKind::None) {
      command.add_flag(names, args.flags[key], std::string(option.help));
    } else {
      command.add_option(names, args.values[key], std::string(option.help))
          ->allow_extra_args(false);
    }
  }
}

JobSpec submission_spec(const std::string& script, const SubmissionArgs& args) {
  SubmitOptions command_line;
  for (const auto& [name, given] : args.flags) {
    if (!given) continue;
    if (auto error = apply_option(command_line, name, std::nullopt)) {
      throw std::runtime_error(*error);
    }
  }
  for (const auto& [name, values] : args.values) {
    for (const std::string& value : values) {
      if (auto error = apply_option(command_line, name, value)) throw std::runtime_error(*error);
    }
  }
  Submission submission =
      submission_from_script(script, command_line, submitting_environment(), SystemClock().now());
  for (const std::string& warning : submission.warnings) {
    std::cerr << program_name() << ": warning: " << warning << "\n";
  }
  if (submission.error) throw std::runtime_error(*submission.error);
  JobSpec spec = std::move(submission.spec);
  const auto cwd = std::filesystem::current_path();
  spec.workdir =
      spec.workdir.empty() ? cwd.string() : std::filesystem::absolute(spec.workdir).string();
  spec.extra.edit().output = absolute_from(spec.workdir, spec.extra->output);
  spec.extra.edit().error = absolute_from(spec.workdir, spec.extra->error);
  return spec;
}

std::int64_t send_submission(const JobSpec& spec, int retries) {
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
  for (int attempt = 0;; ++attempt) {
    try {
      return client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
    } catch (const proto::TransportError& e) {
      if (attempt >= retries) throw;
      std::cerr << program_name() << ": " << e.what() << "; sending the submission again\n";
    }
  }
}

}  // namespace sched::cli
