// What a process of a `sched run` step learns from its environment
// (docs/protocol.md §6, malleable.h for the SCHED_MALL_* variables).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace sched::mall {

struct StepEnv {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int rank = 0;
  int size = 0;
  std::string agent_endpoint;
  std::string bind_endpoint = "tcp://127.0.0.1:*";  // where peers send us data
  std::optional<std::filesystem::path> rendezvous_dir;
  std::chrono::milliseconds timeout{30000};
};

// Reads and checks the variables. Throws Failure: SCHED_MALL_EENV when a
// step variable is missing or malformed, SCHED_MALL_ENOAGENT when only the
// agent's endpoint is missing (a step started by an older agent).
StepEnv read_step_env();

}  // namespace sched::mall
