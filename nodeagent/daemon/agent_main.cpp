// nodeagent: one per compute node (or several per machine as virtual nodes
// with --node-name and --cores).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "agent.hpp"
#include "config_check.hpp"
#include "sched/daemon_log.hpp"

namespace {
std::atomic<bool> stop_requested{false};
void on_signal(int) { stop_requested.store(true); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nodeagent: runs a node's jobs for schedd"};
  sched::agent::AgentOptions options;
  sched::layout::LogOptions log;
  bool check_only = false;
  app.add_option("--engine", options.engine_endpoint, "schedd's agent endpoint")
      ->capture_default_str();
  app.add_option("--node-name", options.node_name, "Name of this node (default: the host name)");
  app.add_option("--cores", options.cores, "A virtual node of this many cores")
      ->check(CLI::PositiveNumber);
  app.add_option("--gpus", options.gpus,
                 "This node's GPUs, declared (as Slurm's gres.conf; default: those hwloc finds)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--spool-dir", options.spool_dir,
                 "Where batch scripts are written and the process table (tasks) is kept "
                 "(default: /tmp/sched-agent-NODE)");
  app.add_option("--power-meter", options.power_meter,
                 "auto (RAPL, else the model), a plugin name or a path")
      ->capture_default_str();
  app.add_option("--power-options", options.power_options, "The meter plugin's options");
  app.add_option("--idle-watts", options.idle_w, "What this node draws idle (the model meter)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--data-address", options.data_address,
                 "Address this node's job processes receive data on from other nodes' "
                 "(SCHED_MALL_BIND; default: loopback, one machine)");
  app.add_option("--secret-key-file", options.secret_key_file,
                 "This agent's CURVE secret key (`sched keys new`)");
  app.add_option("--server-public-key-file", options.server_public_key_file,
                 "schedd's CURVE public key");
  app.add_flag("--allow-root-jobs", options.allow_root_jobs,
               "Run jobs whose user is root (refused by default)");
  app.add_option("--containment", options.containment,
                 "How jobs are contained: auto (cgroup2, else cgroup1, else none), cgroup2, "
                 "cgroup1 or none")
      ->check(CLI::IsMember({"auto", "cgroup2", "cgroup1", "none"}))
      ->capture_default_str();
  app.add_option("--cgroup-root", options.cgroup_root, "Where the cgroup hierarchies are mounted")
      ->capture_default_str();
  app.add_option("--log-level", log.level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_option(
      "--log-file", log.file,
      "Log to this file, appended (default: stderr, which systemd sends to the journal)");
  app.add_flag("--check-config", check_only,
               "Check the options (and --config file) and exit: 0 when usable, 1 with what is "
               "wrong, by key; nothing is started");
  app.set_version_flag("--version", std::string("nodeagent 0.1.0"));
  // The same options from a file (conf/nodeagent.toml: `power-meter = "rapl"`);
  // the command line wins, and a key that is no option is an error.
  app.set_config("--config", "", "Read options from this TOML file");
  app.allow_config_extras(CLI::config_extras_mode::error);
  CLI11_PARSE(app, argc, argv);

  if (check_only) {
    const std::string file = app.get_config_ptr()->as<std::string>();
    const std::string source = file.empty() ? "options" : file;
    auto problems = sched::agent::check_options(options, source);
    if (!log.file.empty() &&
        !std::filesystem::is_directory(std::filesystem::absolute(log.file).parent_path())) {
      problems.push_back(source + ": log-file: no folder for " + log.file);
    }
    for (const std::string& problem : problems) std::cerr << problem << "\n";
    if (problems.empty()) std::cout << source << ": ok\n";
    return problems.empty() ? 0 : 1;
  }
  try {
    sched::layout::setup_daemon_log("nodeagent", log);
  } catch (const std::exception& e) {
    std::cerr << "nodeagent: " << e.what() << "\n";
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    sched::agent::Agent agent(options);
    agent.run(stop_requested);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
