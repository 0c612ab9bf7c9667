// schedd → subscribers (docs/protocol.md §9): the body of an event on the
// PUB socket. Its topics are the engine's (sched::topic); the conversion
// from the engine's Event is convert/ (event_msg).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sched::proto {

// The body of an event on the PUB socket; the first frame is the topic
// ("job.started", ...). Fields that do not apply are absent.
struct EventMsg {
  std::uint64_t seq = 0;
  double time = 0;
  std::string topic;
  std::optional<std::int64_t> job;
  std::optional<std::string> from;   // job state before
  std::optional<std::string> state;  // job state after
  std::optional<int> nodes;
  std::optional<int> prev_nodes;         // job.adapting, job.resized, job.request
  std::optional<double> expected_start;  // job.reserved
  std::optional<std::string> node;
  std::optional<double> lower_w;  // power.corridor, power.violation
  std::optional<double> upper_w;
  std::optional<double> power_w;  // power.violation
  std::optional<double> pass_s;   // sched.pass
  std::optional<int> actions;
  std::optional<std::string> reason;
  std::optional<std::string> code;  // policy.error, policy.reverted
  std::optional<std::string> file;
  std::optional<int> line;
  std::optional<std::string> message;
  std::optional<std::string> user;  // auth.denied: who was refused; job.*: the job's user
  // ---- issue 19: job.*: the job's name and partition; job.completed,
  // job.failed, job.cancelled, job.timeout: its exit code (or minus the
  // signal); the failure reason is in `reason`, as a node event's is.
  std::optional<std::string> name;
  std::optional<std::string> partition;
  std::optional<int> exit_code;
  template <class V>
  void fields(V& v) {
    v("seq", seq);
    v("time", time);
    v("topic", topic);
    v("job", job);
    v("from", from);
    v("state", state);
    v("nodes", nodes);
    v("prev_nodes", prev_nodes);
    v("expected_start", expected_start);
    v("node", node);
    v("lower_w", lower_w);
    v("upper_w", upper_w);
    v("power_w", power_w);
    v("pass_s", pass_s);
    v("actions", actions);
    v("reason", reason);
    v("code", code);
    v("file", file);
    v("line", line);
    v("message", message);
    v("user", user);
    // ---- issue 19
    v("name", name);
    v("partition", partition);
    v("exit_code", exit_code);
  }
};

}  // namespace sched::proto
