#include "web_model.hpp"

#include <nlohmann/json.hpp>

#include "sched/convert/wire_convert.hpp"

namespace sched::daemon::http {
namespace {

using nlohmann::json;

json segments_json(const auto& segments) {
  json out = json::array();
  for (const auto& s : segments) out.push_back({{"t", s.time}, {"n", s.nodes}});
  return out;
}

std::string node_state(const Node& node) {
  if (!node.up) return "down";
  if (node.draining) return node.job != 0 ? "draining" : "drained";
  return node.job != 0 ? "allocated" : "idle";
}

}  // namespace

void WebModel::on_event(const Event& event, const Job* job) {
  if (event.seq > last_seq_) last_seq_ = event.seq;
  if (event.job == 0 || !job) return;
  switch (event.type) {
    case EventType::JobStarting:
    case EventType::JobStarted: {
      auto& segments = segments_[event.job];
      if (segments.empty()) segments.push_back({event.time, job->size()});
      break;
    }
    case EventType::JobResized:
      if (event.nodes != event.prev_nodes)
        segments_[event.job].push_back({event.time, event.nodes});
      break;
    default:
      break;
  }
  if (is_terminal(job->state) && segments_.count(event.job)) {
    Ended ended;
    ended.id = job->id;
    ended.name = job->spec.name;
    ended.user = job->spec.user;
    ended.state = std::string(to_string(job->state));
    ended.start = job->start_time;
    ended.end = job->end_time >= 0 ? job->end_time : event.time;
    ended.segments.reserve(segments_[event.job].size());
    for (const Segment& s : segments_[event.job]) ended.segments.push_back(s);
    recent_.push_back(std::move(ended));
    while (recent_.size() > kRecentJobs) recent_.pop_front();
    segments_.erase(event.job);
  }
}

std::string WebModel::event_json(const Event& event, const Job* job) {
  json out = {{"seq", event.seq}, {"time", event.time}, {"topic", std::string(topic(event.type))}};
  if (event.job != 0) {
    out["job"] = event.job;
    out["nodes"] = event.nodes;
    out["prev_nodes"] = event.prev_nodes;
    out["state"] = std::string(to_string(event.to));
    if (job) out["name"] = job->spec.name;
  }
  if (!event.node.empty()) out["node"] = event.node;
  if (!event.message.empty()) out["message"] = event.message;
  if (event.type == EventType::SchedPass) out["pass_s"] = event.pass_s;
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

void WebModel::sample_power(const Engine& engine, double now) {
  if (!power_.empty() && now - power_.back().time < kPowerEveryS) return;
  const PowerView power = engine.power();
  power_.push_back({now, power.current_w, power.lower_w, power.upper_w});
  while (power_.size() > kPowerSamples) power_.pop_front();
}

std::string WebModel::state_json(const Engine& engine, std::uint64_t submitted, double now) const {
  const Cluster& cluster = engine.cluster();
  json nodes = json::array();
  for (const Node& node : cluster.nodes()) {
    json entry = {{"name", node.name}, {"cores", node.cores}, {"state", node_state(node)}};
    if (node.job != 0) entry["job"] = node.job;
    nodes.push_back(std::move(entry));
  }
  json jobs = json::array();
  for (const Job* job : engine.running_jobs()) {
    json entry = {{"id", job->id},
                  {"name", job->spec.name},
                  {"user", job->spec.user},
                  {"state", std::string(to_string(job->state))},
                  {"start", job->start_time},
                  {"size", job->size()},
                  {"nodes", convert::node_names(*job, cluster)}};
    const auto it = segments_.find(job->id);
    // A job restored after a restart has no history here: one segment.
    entry["segments"] = it != segments_.end()
                            ? segments_json(it->second)
                            : segments_json(std::vector<Segment>{{job->start_time, job->size()}});
    jobs.push_back(std::move(entry));
  }
  json recent = json::array();
  for (const Ended& ended : recent_) {
    recent.push_back({{"id", ended.id},
                      {"name", ended.name},
                      {"user", ended.user},
                      {"state", ended.state},
                      {"start", ended.start},
                      {"end", ended.end},
                      {"segments", segments_json(ended.segments)}});
  }
  json queue = json::array();
  const std::vector<const Job*> pending = engine.pending_jobs();
  for (std::size_t i = 0; i < pending.size() && i < kQueueShown; ++i) {
    const Job* job = pending[i];
    queue.push_back({{"id", job->id},
                     {"name", job->spec.name},
                     {"user", job->spec.user},
                     {"nodes", job->spec.nodes},
                     {"submit", job->submit_time}});
  }
  json power_history = json::array();
  for (const PowerSample& s : power_) {
    power_history.push_back({s.time, s.watts, s.lower, s.upper});
  }
  const PowerView power = engine.power();
  const json out = {{"seq", last_seq_},
                    {"now", now},
                    {"nodes", nodes},
                    {"running", jobs},
                    {"recent", recent},
                    {"queue", {{"total", engine.pending_queue().listing_size()}, {"jobs", queue}}},
                    {"power",
                     {{"current_w", power.current_w},
                      {"lower_w", power.lower_w},
                      {"upper_w", power.upper_w},
                      {"history", power_history}}},
                    {"submitted", submitted}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace sched::daemon::http
