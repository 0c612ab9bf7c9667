// nodeagent: one per compute node (or several per machine as virtual nodes
// with --node-name and --cores).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>

#include "agent.hpp"

namespace {
std::atomic<bool> stop_requested{false};
void on_signal(int) { stop_requested.store(true); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nodeagent: runs a node's jobs for schedd"};
  sched::agent::AgentOptions options;
  std::string log_level = "info";
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
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.set_version_flag("--version", std::string("nodeagent 0.1.0"));
  // The same options from a file (conf/nodeagent.toml: `power-meter = "rapl"`);
  // the command line wins, and a key that is no option is an error.
  app.set_config("--config", "", "Read options from this TOML file");
  app.allow_config_extras(CLI::config_extras_mode::error);
  CLI11_PARSE(app, argc, argv);

  spdlog::set_default_logger(spdlog::stderr_color_mt("nodeagent"));
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [nodeagent] [%^%l%$] %v");
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
