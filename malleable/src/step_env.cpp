#include "step_env.hpp"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "failure.hpp"
#include "sched/malleable.h"

namespace sched::mall {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

const char* required(const char* name) {
  const char* value = variable(name);
  if (!value) {
    throw Failure(SCHED_MALL_EENV, std::string("not inside a sched step: ") + name +
                                       " is not set (start the program with `sched run`)");
  }
  return value;
}

template <class Int>
Int number(const char* name, const char* text, Int min, Int max = std::numeric_limits<Int>::max()) {
  const std::string_view view(text);
  Int value{};
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size() || value < min || value > max) {
    throw Failure(SCHED_MALL_EENV, std::string(name) + "='" + text + "' is not a number from " +
                                       std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

}  // namespace

StepEnv read_step_env() {
  StepEnv env;
  env.job = number<std::int64_t>("SCHED_JOB_ID", required("SCHED_JOB_ID"), 0);
  env.step = number<std::int64_t>("SCHED_STEP_ID", required("SCHED_STEP_ID"), 0);
  env.size = number<int>("SCHED_NTASKS", required("SCHED_NTASKS"), 1);
  env.rank = number<int>("SCHED_PROCID", required("SCHED_PROCID"), 0, env.size - 1);
  const char* agent = variable("SCHED_AGENT_ENDPOINT");
  if (!agent) {
    throw Failure(SCHED_MALL_ENOAGENT,
                  "SCHED_AGENT_ENDPOINT is not set: the node agent that started this step does "
                  "not offer the malleability service");
  }
  env.agent_endpoint = agent;
  if (const char* bind = variable("SCHED_MALL_BIND")) {
    const std::string text(bind);
    env.bind_endpoint = text.find("://") != std::string::npos ? text : "tcp://" + text + ":*";
  }
  if (const char* dir = variable("SCHED_MALL_RENDEZVOUS_DIR")) env.rendezvous_dir = dir;
  if (const char* ms = variable("SCHED_MALL_TIMEOUT_MS")) {
    env.timeout = std::chrono::milliseconds(number<int>("SCHED_MALL_TIMEOUT_MS", ms, 1));
  }
  return env;
}

}  // namespace sched::mall
