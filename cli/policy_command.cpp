// `sched policy [info]`: which scheduling policy runs, from where, how its
// reloads went, its last failure (file, line, when), whether its live passes
// fail and whether the engine went back to the last good policy, and its
// parameters; `sched policy reload` reads its file again.
#include <iostream>
#include <memory>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "slurm_time.hpp"

namespace sched::cli {
namespace {

// "fcfs.lua:12", "fcfs.lua", or "" when the failure does not say where.
std::string where(const proto::PolicyFailureInfo& failure) {
  if (!failure.file) return "";
  return *failure.file + (failure.line ? ":" + std::to_string(*failure.line) : "");
}

void print_policy(const proto::PolicyInfoReply& info) {
  std::cout << "Policy:          " << info.name << "\n"
            << "Path:            " << info.path << "\n"
            << "Reloads:         " << info.reloads << "\n"
            << "Failed reloads:  " << info.failed_reloads << "\n";
  if (const auto& f = info.last_failure) {
    std::cout << "Last error:      " << f->message << "\n"
              << "  Where:         " << (where(*f).empty() ? "(unknown)" : where(*f)) << "\n"
              << "  When:          " << format_timestamp(f->time) << "\n"
              << "  Kind:          " << f->code << "\n";
  } else if (info.last_error) {
    std::cout << "Last error:      " << *info.last_error << "\n";
  }
  if (info.consecutive_failures > 0) {
    std::cout << "Failing:         " << info.consecutive_failures << " live pass(es) in a row";
    if (info.revert_after_failures > 0 && info.consecutive_failures >= info.revert_after_failures &&
        !info.fallback) {
      std::cout << "; no earlier policy completed a pass: nothing to revert to";
    }
    std::cout << "\n";
  }
  std::cout << "Failed passes:   " << info.failed_passes << "\n"
            << "Reverts:         " << info.reverts << "\n";
  if (const auto& r = info.last_revert) {
    std::cout << "Last revert:     " << format_timestamp(r->time) << ": " << r->message << "\n";
  }
  std::cout << "Parameters:" << (info.params.empty() ? "      (none)\n" : "\n");
  for (const auto& [key, value] : info.params) std::cout << "  " << key << " = " << value << "\n";
}

}  // namespace

void add_policy_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* policy = app.add_subcommand("policy", "Show the scheduling policy, or reload it");
  policy->require_subcommand(0, 1);
  policy->add_flag("--json", *json, "Print JSON");

  const auto show = [json] {
    run_command([&] {
      const auto info =
          client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
      if (*json) {
        std::cout << to_json(info).dump(2) << "\n";
      } else {
        print_policy(info);
      }
    });
  };
  policy->callback([policy, show] {
    if (policy->get_subcommands().empty()) show();
  });
  CLI::App* info_command = policy->add_subcommand("info", "Show the policy (the default)");
  info_command->add_flag("--json", *json, "Print JSON");
  info_command->callback(show);

  CLI::App* reload_command =
      policy->add_subcommand("reload", "Read the policy file again; a broken one is refused");
  reload_command->add_flag("--json", *json, "Print JSON");
  reload_command->callback([json] {
    run_command([&] {
      proto::PolicyInfoReply info;
      try {
        info = client().call<proto::PolicyInfoReply>(proto::type::kPolicyReload, proto::Empty{});
      } catch (const proto::ProtoError& e) {
        if (e.code() != proto::code::kInvalid) throw;
        throw std::runtime_error(std::string("reload refused, the previous policy keeps "
                                             "running: ") +
                                 e.what());
      }
      if (*json) {
        std::cout << to_json(info).dump(2) << "\n";
      } else {
        std::cout << "Reloaded.\n";
        print_policy(info);
      }
    });
  });
}

}  // namespace sched::cli
