#include "resize_requests.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "sched/proto/error.hpp"

namespace sched::daemon {
namespace {

bool grows(const ResizeRequest& request) { return request.op == ResizeRequest::Op::Expand; }

Event request_event(EventType type, JobId job, int from, int nodes,
                    const ResizeRequests::Asker& asker) {
  Event event;
  event.type = type;
  event.job = job;
  event.from = event.to = JobState::Running;
  event.prev_nodes = from;
  event.nodes = nodes;
  event.node = asker.node;
  event.user = asker.user;
  event.reason = asker.node.empty() ? "user" : "application";
  return event;
}

}  // namespace

void ResizeRequests::answer(JobId job, const Live& live, EventType type, std::string state,
                            int nodes, std::string code, std::string message) {
  Outgoing out;
  out.node = live.asker.node;
  out.answer.job = job;
  out.answer.request = live.id;
  out.answer.state = std::move(state);
  out.answer.nodes = nodes;
  out.answer.code = code;
  out.answer.message = message;
  out.event = request_event(type, job, live.from, nodes, live.asker);
  out.event.code = std::move(code);
  out.event.message =
      "request " + std::to_string(live.id) + (message.empty() ? std::string() : ": " + message);
  out_.push_back(std::move(out));
}

proto::ResizeAnswer ResizeRequests::add(const Job& job, const ResizeRequest& request,
                                        const Asker& asker, double timeout_s, double now) {
  if (auto old = live_.find(job.id); old != live_.end()) {
    const Live replaced = old->second;
    live_.erase(old);
    answer(job.id, replaced, EventType::ResizeRefused, "refused", replaced.request.nodes,
           std::string(proto::code::kConflict),
           "replaced by request " + std::to_string(next_id_ + 1));
  }
  Live live;
  live.id = ++next_id_;
  live.request = request;
  live.from = job.size();
  live.asker = asker;
  const double timeout = timeout_s > 0 ? std::min(timeout_s, kMaxTimeoutS) : kDefaultTimeoutS;
  live.deadline = now + timeout;
  live_[job.id] = live;
  Event requested =
      request_event(EventType::ResizeRequested, job.id, live.from, request.nodes, asker);
  requested.message = "request " + std::to_string(live.id) + ": " +
                      (grows(request) ? "grow" : "shrink") + " to " +
                      std::to_string(request.nodes) + " nodes" +
                      (asker.user.empty() ? std::string() : " (asked by " + asker.user + ")");
  out_.push_back({{}, {}, requested});
  // The pending answer is the reply; its event follows the request's.
  answer(job.id, live, EventType::ResizePending, "pending", request.nodes);
  proto::ResizeAnswer reply = out_.back().answer;
  out_.back().node.clear();  // answered by the reply, not again as a notice
  // The pass the request made due may have begun the adaptation already
  // (before this request was live): granted now, after its pending answer.
  if (const auto it = adapting_.find(job.id); job.state == JobState::Adapting &&
                                              it != adapting_.end() &&
                                              it->second.grows == grows(request)) {
    live_.erase(job.id);
    answer(job.id, live, EventType::ResizeGranted, "granted", it->second.to);
  }
  return reply;
}

proto::ResizeAnswer ResizeRequests::refuse(JobId job, int current, int nodes, const Asker& asker,
                                           std::string code, std::string message) {
  Live live;
  live.from = current;
  live.asker = asker;
  live.request.nodes = nodes;
  Event requested = request_event(EventType::ResizeRequested, job, current, nodes, asker);
  requested.message = "resize to " + std::to_string(nodes) + " nodes" +
                      (asker.user.empty() ? std::string() : " (asked by " + asker.user + ")");
  out_.push_back({{}, {}, requested});
  answer(job, live, EventType::ResizeRefused, "refused", nodes, std::move(code),
         std::move(message));
  proto::ResizeAnswer reply = out_.back().answer;
  out_.back().node.clear();  // the reply says it
  return reply;
}

void ResizeRequests::on_event(const Event& event) {
  const bool stopped =
      event.type == EventType::JobCompleting || event.type == EventType::JobRequeued ||
      event.type == EventType::JobCompleted || event.type == EventType::JobFailed ||
      event.type == EventType::JobCancelled || event.type == EventType::JobTimeout;
  if (event.type == EventType::JobAdapting) {
    // job.adapting carries the size before; the engine's message says
    // where to: "expand 2 -> 4" or "shrink 4 -> 2[: why]".
    const auto arrow = event.message.find("-> ");
    const int to = arrow == std::string::npos ? 0 : std::atoi(event.message.c_str() + arrow + 3);
    adapting_[event.job] = {event.message.rfind("expand", 0) == 0, to};
  } else if (event.type == EventType::JobResized || stopped) {
    adapting_.erase(event.job);
  }
  auto it = live_.find(event.job);
  if (it == live_.end()) return;
  const Live live = it->second;
  if (event.type == EventType::JobAdapting) {
    const Adapting& now = adapting_[event.job];
    if (now.grows != grows(live.request)) return;  // the policy's own resize the other way
    live_.erase(it);
    answer(event.job, live, EventType::ResizeGranted, "granted", now.to);
    return;
  }
  if (stopped) {
    live_.erase(it);
    answer(event.job, live, EventType::ResizeRefused, "refused", live.request.nodes,
           std::string(proto::code::kConflict), "the job stopped running");
  }
}

std::vector<JobId> ResizeRequests::expire(double now) {
  std::vector<JobId> expired;
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    const Live live = it->second;
    expired.push_back(it->first);
    answer(it->first, live, EventType::ResizeExpired, "expired", live.request.nodes,
           std::string(proto::code::kExpired), "not granted within its timeout; withdrawn");
    it = live_.erase(it);
  }
  return expired;
}

void ResizeRequests::dropped_at_restart(const Job& job) {
  Event event = request_event(EventType::ResizeExpired, job.id, job.size(),
                              job.run->request ? job.run->request->nodes : 0, Asker{});
  event.reason.clear();
  event.message = "schedd restarted: the request was withdrawn (ask again)";
  out_.push_back({{}, {}, event});
}

std::vector<ResizeRequests::Outgoing> ResizeRequests::take() { return std::exchange(out_, {}); }

}  // namespace sched::daemon
