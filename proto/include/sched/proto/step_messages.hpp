// What the tasks of a job step produce, on its way agent → schedd → the
// client that ran the step (`sched run`): their output and their exits. Both
// peers' headers include it (client_messages.hpp, agent_messages.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kStepOutput = "step.output";
inline constexpr std::string_view kStepExited = "step.exited";
}  // namespace type

// agent → engine → the client that ran the step: output as it comes.
struct StepOutput {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  std::string stream;  // "out" or "err"
  std::string data;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("stream", stream);
    v("data", data);
  }
};

// agent → engine → client: one task of the step ended.
struct StepExited {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  int status = 0;  // exit code, or minus the signal
  std::string message;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("status", status);
    v("message", message);
  }
};

}  // namespace sched::proto
