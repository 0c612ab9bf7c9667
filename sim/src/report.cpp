#include "sched/sim/report.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "report_text.hpp"

namespace sched::sim {
void write_text_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::runtime_error("error writing " + path);
}

std::string format_seconds(double seconds) {
  plot::TextBuffer text;
  append_seconds(text, seconds);
  return text.take();
}

void write_jobs_csv(const std::string& path, const std::vector<JobRecord>& jobs) {
  // The text in one buffer, written once: a stream insertion per field
  // cost a replay of lublin_256 a twentieth of its time.
  plot::TextBuffer text;
  text.reserve(jobs.size() * 64 + 128);
  text += "id,submit,start,end,nodes,kind,state,resizes,start_nodes,end_nodes\n";
  for (const auto& job : jobs) {
    text.append_integer(job.id);
    text += ',';
    append_seconds(text, job.submit);
    text += ',';
    if (job.start >= 0) append_seconds(text, job.start);
    text += ',';
    if (job.end >= 0) append_seconds(text, job.end);
    text += ',';
    text.append_integer(job.nodes);
    text += ',';
    text += to_string(job.kind);
    text += ',';
    text += to_string(job.state);
    text += ',';
    text.append_integer(job.resizes);
    text += ',';
    text.append_integer(job.start_nodes);
    text += ',';
    text.append_integer(job.end_nodes);
    text += '\n';
  }
  write_text_file(path, text.view());
}

void write_resizes_csv(const std::string& path, const std::vector<ResizeRecord>& resizes) {
  plot::TextBuffer text;
  text.reserve(resizes.size() * 32 + 32);
  text += "job,time,from,to\n";
  for (const auto& r : resizes) {
    text.append_integer(r.job);
    text += ',';
    append_seconds(text, r.time);
    text += ',';
    text.append_integer(r.from);
    text += ',';
    text.append_integer(r.to);
    text += '\n';
  }
  write_text_file(path, text.view());
}

void write_metrics_json(const std::string& path, const Metrics& metrics) {
  // ordered_json keeps the keys in the order docs/design.md §8 lists them.
  nlohmann::ordered_json json;
  json["jobs"] = metrics.jobs;
  json["skipped"] = metrics.skipped;
  json["nodes"] = metrics.nodes;
  json["makespan"] = metrics.makespan;
  json["avg_wait"] = metrics.avg_wait;
  json["avg_response"] = metrics.avg_response;
  json["avg_bsld"] = metrics.avg_bsld;
  json["utilization"] = metrics.utilization;
  json["violations"] = metrics.violations;
  json["energy_j"] = metrics.energy_j;
  write_text_file(path, json.dump(2) + '\n');
}

std::string format_summary(const std::string& policy, const Metrics& metrics) {
  return policy + ": " + std::to_string(metrics.jobs) + " jobs (" +
         std::to_string(metrics.skipped) + " skipped) on " + std::to_string(metrics.nodes) +
         " nodes, makespan " + plot::fixed_text(metrics.makespan, 1) + " s, avg wait " +
         plot::fixed_text(metrics.avg_wait, 1) + " s, avg response " +
         plot::fixed_text(metrics.avg_response, 1) + " s, avg bsld " +
         plot::fixed_text(metrics.avg_bsld, 2) + ", utilization " +
         plot::fixed_text(metrics.utilization * 100, 1) + "%";
}

}  // namespace sched::sim
