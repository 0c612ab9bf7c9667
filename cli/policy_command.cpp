// `sched policy [info]`: which scheduling policy runs, from where, how its
// reloads went, its last failure (file, line, when), whether its live passes
// fail and whether the engine went back to the last good policy, and its
// parameters; `sched policy reload` reads its file again. The
// administrator's workflow (issue 22, docs/admin.md): `check FILE` (what a
// candidate would do now), `set FILE|NAME` (deploy it live), `history` and
// `rollback [VERSION]`; `test FILE TESTS.lua` runs a policy's tests offline;
// `try FILE` compares it with the running one on twins (policy_try.cpp).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "policy_tests.hpp"
#include "policy_try.hpp"
#include "sched/install_layout.hpp"
#include "sched/policy_host.hpp"
#include "slurm_time.hpp"
#include "table.hpp"

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

// ---- issue 22

// A file argument as schedd must read it: a path that exists here is made
// absolute (schedd's working folder is not ours); anything else is a name
// in schedd's policy folder, sent as given.
std::string policy_argument(const std::string& arg) {
  std::error_code ec;
  if (arg.find('/') != std::string::npos || arg.ends_with(".lua")) {
    if (std::filesystem::exists(arg, ec)) return std::filesystem::absolute(arg, ec).string();
  }
  return arg;
}

proto::PolicyFileRequest file_request(const std::string& arg,
                                      const std::vector<std::string>& params) {
  proto::PolicyFileRequest request;
  request.policy = policy_argument(arg);
  for (const std::string& param : params) {
    const auto eq = param.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::runtime_error("--param " + param + ": expected key=value");
    }
    request.params[param.substr(0, eq)] = param.substr(eq + 1);
  }
  return request;
}

std::string action_line(const proto::PolicyActionInfo& action) {
  std::string line = action.action + " job " + std::to_string(action.job);
  if (action.action == "start") {
    line += " on " + std::to_string(action.nodes) + " node(s)";
  } else if (action.action == "expand" || action.action == "shrink") {
    line += " from " + (action.from_nodes ? std::to_string(*action.from_nodes) : "?") + " to " +
            std::to_string(action.nodes) + " node(s)";
  } else if (action.action == "reserve" && action.time) {
    line += " at " + format_timestamp(*action.time);
  } else if (action.action == "preempt" && action.mode) {
    line += " (" + *action.mode + ")";
  }
  return line;
}

// Exits 1 when the candidate would be refused.
void print_check(const proto::PolicyCheckReply& check) {
  std::cout << "Policy:   " << (check.name.empty() ? "(not loaded)" : check.name) << "\n"
            << "Path:     " << check.path << "\n";
  if (!check.files.empty()) {
    std::cout << "Files:   ";
    for (const auto& file : check.files) std::cout << " " << file;
    std::cout << "\n";
  }
  if (const auto& f = check.failure) {
    std::cout << "Result:   refused: " << f->message << "\n"
              << "  Where:  " << (where(*f).empty() ? "(unknown)" : where(*f)) << "\n"
              << "  Kind:   " << f->code << "\n";
  } else {
    std::cout << "Result:   ok (policy set would take it)\n";
  }
  std::cout << "Actions:  " << check.actions.size() << (check.failure ? " (dropped)" : "") << "\n";
  for (const auto& action : check.actions) std::cout << "  " << action_line(action) << "\n";
  std::cout << "Refusals: " << check.refusals.size() << "\n";
  for (const auto& refusal : check.refusals) std::cout << "  " << refusal.message << "\n";
}

// A PARTITION column once a partition's own policy has versions ("-" for
// the [scheduler] policy's).
void print_history(const proto::PolicyHistoryReply& history) {
  const bool partitions = std::any_of(history.versions.begin(), history.versions.end(),
                                      [](const auto& v) { return v.partition.has_value(); });
  std::vector<Column> columns = {{""},      {"VERSION", Align::Right},
                                 {"WHEN"},  {"BY"},
                                 {"HOW"},   {"POLICY"},
                                 {"HASH"},  {"PATH"},
                                 {"PARAMS"}};
  if (partitions) columns.insert(columns.begin() + 2, Column{"PARTITION"});
  Table table(columns);
  for (const auto& v : history.versions) {
    std::string params;
    for (const auto& [key, value] : v.params)
      params += (params.empty() ? "" : " ") + key + "=" + value;
    std::vector<std::string> row = {v.current ? "*" : "",
                                    std::to_string(v.version),
                                    format_timestamp(v.time),
                                    v.user,
                                    v.how,
                                    v.name,
                                    v.hash.substr(0, 12),
                                    v.path,
                                    params};
    if (partitions) row.insert(row.begin() + 2, v.partition.value_or("-"));
    table.add_row(row);
  }
  std::cout << table.render();
}

// policy.set and policy.rollback: a refusal says the running policy stays.
proto::PolicyInfoReply switch_policy(std::string_view type, const auto& body,
                                     const std::string& what) {
  try {
    return client().call<proto::PolicyInfoReply>(type, body);
  } catch (const proto::ProtoError& e) {
    if (e.code() != proto::code::kInvalid) throw;
    throw std::runtime_error(what + " refused, the running policy keeps running: " + e.what());
  }
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

  // ---- issue 22
  auto file = std::make_shared<std::string>();
  auto params = std::make_shared<std::vector<std::string>>();
  // ---- issue 20 item 1: a partition's own policy
  auto partition = std::make_shared<std::string>();
  const auto with_partition = [partition](proto::PolicyFileRequest request) {
    if (!partition->empty()) request.partition = *partition;
    return request;
  };
  constexpr const char* kPartitionHelp =
      "A partition's own policy (default: the [scheduler] policy)";
  CLI::App* check_command = policy->add_subcommand(
      "check", "Load a policy and show what its pass would do now, changing nothing");
  check_command->add_option("file", *file, "Policy file (or name in schedd's policy folder)")
      ->required();
  check_command->add_option("--param", *params, "Policy parameter key=value (repeatable)");
  check_command->add_option("-p,--partition", *partition, kPartitionHelp);
  check_command->add_flag("--json", *json, "Print JSON");
  check_command->callback([json, file, params, with_partition] {
    run_command([&] {
      const auto check = client().call<proto::PolicyCheckReply>(
          proto::type::kPolicyCheck, with_partition(file_request(*file, *params)));
      if (*json) {
        std::cout << to_json(check).dump(2) << "\n";
      } else {
        print_check(check);
      }
      if (!check.ok) std::exit(1);
    });
  });

  CLI::App* set_command = policy->add_subcommand(
      "set", "Switch the running policy live (load, dry pass, swap); a broken one is refused");
  set_command->add_option("file", *file, "Policy file (or name in schedd's policy folder)")
      ->required();
  set_command->add_option("--param", *params,
                          "Policy parameter key=value (repeatable; none: keep the running ones)");
  set_command->add_option("-p,--partition", *partition, kPartitionHelp);
  set_command->add_flag("--json", *json, "Print JSON");
  set_command->callback([json, file, params, with_partition] {
    run_command([&] {
      const auto info =
          switch_policy(proto::type::kPolicySet, with_partition(file_request(*file, *params)),
                        "policy set " + *file);
      if (*json) {
        std::cout << to_json(info).dump(2) << "\n";
      } else {
        std::cout << "Policy set.\n";
        print_policy(info);
      }
    });
  });

  CLI::App* history_command =
      policy->add_subcommand("history", "List the deployed policy versions (* = running)");
  history_command->add_option("-p,--partition", *partition,
                              "Only this partition's own policy ('-': the [scheduler] policy)");
  history_command->add_flag("--json", *json, "Print JSON");
  history_command->callback([json, partition] {
    run_command([&] {
      auto history =
          client().call<proto::PolicyHistoryReply>(proto::type::kPolicyHistory, proto::Empty{});
      if (!partition->empty()) {
        const std::string whose = *partition == "-" ? "" : *partition;
        std::erase_if(history.versions,
                      [&](const auto& v) { return v.partition.value_or("") != whose; });
      }
      if (*json) {
        std::cout << to_json(history).dump(2) << "\n";
      } else {
        print_history(history);
      }
    });
  });

  auto version = std::make_shared<std::uint64_t>(0);
  CLI::App* rollback_command = policy->add_subcommand(
      "rollback", "Go back to a deployed version (default: the one before the running one)");
  rollback_command->add_option("version", *version, "Version (sched policy history)");
  rollback_command->add_option(
      "-p,--partition", *partition,
      "A partition's own policy (default: the [scheduler] policy, or the version's own)");
  rollback_command->add_flag("--json", *json, "Print JSON");
  rollback_command->callback([json, version, partition] {
    run_command([&] {
      proto::PolicyRollbackRequest request;
      if (*version > 0) request.version = *version;
      if (!partition->empty()) request.partition = *partition;
      const auto info = switch_policy(proto::type::kPolicyRollback, request, "policy rollback");
      if (*json) {
        std::cout << to_json(info).dump(2) << "\n";
      } else {
        std::cout << "Rolled back.\n";
        print_policy(info);
      }
    });
  });

  auto tests = std::make_shared<std::string>();
  CLI::App* test_command = policy->add_subcommand(
      "test", "Run a policy's tests (a Lua file of test(name, fn)) offline, without schedd");
  test_command->add_option("file", *file, "Policy file, or the name of a bundled policy")
      ->required();
  test_command->add_option("tests", *tests, "The tests (TESTS.lua)")->required();
  test_command->add_option("--param", *params, "Policy parameter key=value (repeatable)");
  test_command->callback([file, tests, params] {
    run_command([&] {
      const auto path = resolve_policy_path(*file, layout::policy_dir_or(default_policy_dir()));
      if (!path) throw std::runtime_error("no policy " + *file);
      PolicyParams values;
      for (const std::string& param : *params) {
        const auto parsed = parse_param(param);
        if (!parsed) throw std::runtime_error("--param " + param + ": expected key=value");
        values[parsed->first] = parsed->second;
      }
      if (!run_policy_tests(*path, *tests, values, std::cout).ok()) std::exit(1);
    });
  });

  add_policy_try_command(*policy);
}

}  // namespace sched::cli
