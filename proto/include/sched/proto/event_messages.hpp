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
  std::optional<int> prev_nodes;
  std::optional<double> value;
  std::optional<double> value2;
  std::optional<std::string> node;
  std::optional<std::string> message;
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
    v("value", value);
    v("value2", value2);
    v("node", node);
    v("message", message);
  }
};

}  // namespace sched::proto
