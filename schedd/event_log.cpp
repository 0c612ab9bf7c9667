#include "event_log.hpp"

#include <fmt/format.h>

#include "event_wire.hpp"

namespace sched::daemon {

std::string log_value(std::string_view value) {
  const bool plain = !value.empty() && value.find_first_of(" \t\n\"=\\") == std::string_view::npos;
  if (plain) return std::string(value);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string event_log_line(const Event& event, const Job* job) {
  std::string line = fmt::format("event={} seq={}", topic(event.type), event.seq);
  auto add = [&line](std::string_view key, std::string_view value) {
    if (!value.empty()) line += fmt::format(" {}={}", key, log_value(value));
  };
  auto add_number = [&line](std::string_view key, auto value) {
    line += fmt::format(" {}={}", key, value);
  };
  if (is_job_event(event)) {
    add_number("job", event.job);
    if (job) {
      add("user", job->spec.user);
      add("name", job->spec.name);
    }
  }
  switch (event.type) {
    case EventType::JobSubmitted:
    case EventType::JobStarting:
    case EventType::JobStarted:
    case EventType::JobCompleting:
    case EventType::JobRequeued:
    case EventType::JobHeld:
    case EventType::JobReleased:
    case EventType::JobSuspended:
    case EventType::JobResumed:
      add("from", to_string(event.from));
      add("to", to_string(event.to));
      add_number("nodes", event.nodes);
      break;
    case EventType::JobAdapting:
    case EventType::JobResized:
    case EventType::JobRequest:
      add("from", to_string(event.from));
      add("to", to_string(event.to));
      add_number("prev_nodes", event.prev_nodes);
      add_number("nodes", event.nodes);
      break;
    case EventType::JobCompleted:
    case EventType::JobFailed:
    case EventType::JobCancelled:
    case EventType::JobTimeout:
      add("from", to_string(event.from));
      add("to", to_string(event.to));
      add_number("nodes", event.nodes);
      if (job) {
        add_number("exit", job->exit_status);
        add("reason", job->run->end_reason);
      }
      break;
    case EventType::JobReserved:
      add_number("expected_start", event.expected_start);
      break;
    case EventType::NodeUp:
    case EventType::NodeDown:
    case EventType::NodeDrain:
      add("node", event.node);
      add("reason", event.message);
      return line;
    case EventType::PowerCorridor:
    case EventType::PowerViolation:
      add_number("lower_w", event.lower_w);
      add_number("upper_w", event.upper_w);
      if (event.type == EventType::PowerViolation) {
        add_number("power_w", event.power_w);
        add("reason", event.reason);
      }
      break;
    case EventType::PartitionState:
      add("partition", event.partition);
      add("state", event.code);
      break;
    case EventType::PolicyReloaded:
    case EventType::PolicyError:
    case EventType::PolicyReverted:
      add("partition", event.partition);
      add("code", event.code);
      add("file", event.file);
      if (event.line > 0) add_number("line", event.line);
      break;
    case EventType::AuthDenied:
      add("user", event.user);
      add("request", event.reason);
      add("code", event.code);
      break;
    case EventType::ResizeRequested:
    case EventType::ResizePending:
    case EventType::ResizeGranted:
    case EventType::ResizeRefused:
    case EventType::ResizeExpired:
      add_number("prev_nodes", event.prev_nodes);
      add_number("nodes", event.nodes);
      add("by", event.reason);
      add("user", event.user);
      add("node", event.node);
      add("code", event.code);
      break;
    case EventType::SchedPass:
      add("partition", event.partition);
      add_number("pass_s", event.pass_s);
      add_number("actions", event.actions);
      add("reason", event.reason);
      return line;
  }
  add("message", event.message);
  return line;
}

spdlog::level::level_enum event_log_level(const Event& event) {
  switch (event.type) {
    case EventType::SchedPass:
    case EventType::JobReserved:
      return spdlog::level::debug;
    case EventType::PolicyError:
      return spdlog::level::err;
    case EventType::JobFailed:
    case EventType::JobTimeout:
    case EventType::NodeDown:
    case EventType::PolicyReverted:
    case EventType::PowerViolation:
    case EventType::AuthDenied:
      return spdlog::level::warn;
    default:
      return spdlog::level::info;
  }
}

}  // namespace sched::daemon
