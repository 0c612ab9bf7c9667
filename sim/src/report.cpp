#include "sched/sim/report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sched::sim {
namespace {

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  return out;
}

void finish_writing(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) throw std::runtime_error("error writing " + path);
}

// A fixed-point rendering with `decimals` decimals, trailing zeros (and a
// bare decimal point) removed.
std::string format_trimmed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

}  // namespace

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return std::isnan(seconds) ? "nan" : (seconds > 0 ? "inf" : "-inf");
  return format_trimmed(seconds, 6);
}

void write_jobs_csv(const std::string& path, const std::vector<JobRecord>& jobs) {
  auto out = open_for_writing(path);
  out << "id,submit,start,end,nodes,kind,state,resizes\n";
  for (const auto& job : jobs) {
    out << job.id << ',' << format_seconds(job.submit) << ','
        << (job.start >= 0 ? format_seconds(job.start) : "") << ','
        << (job.end >= 0 ? format_seconds(job.end) : "") << ',' << job.nodes << ','
        << to_string(job.kind) << ',' << to_string(job.state) << ',' << job.resizes << '\n';
  }
  finish_writing(out, path);
}

void write_resizes_csv(const std::string& path, const std::vector<ResizeRecord>& resizes) {
  auto out = open_for_writing(path);
  out << "job,time,from,to\n";
  for (const auto& r : resizes) {
    out << r.job << ',' << format_seconds(r.time) << ',' << r.from << ',' << r.to << '\n';
  }
  finish_writing(out, path);
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

  auto out = open_for_writing(path);
  out << json.dump(2) << '\n';
  finish_writing(out, path);
}

std::string format_summary(const std::string& policy, const Metrics& metrics) {
  return policy + ": " + std::to_string(metrics.jobs) + " jobs (" +
         std::to_string(metrics.skipped) + " skipped) on " + std::to_string(metrics.nodes) +
         " nodes, makespan " + format_trimmed(metrics.makespan, 1) + " s, avg wait " +
         format_trimmed(metrics.avg_wait, 1) + " s, avg response " +
         format_trimmed(metrics.avg_response, 1) + " s, avg bsld " +
         format_trimmed(metrics.avg_bsld, 2) + ", utilization " +
         format_trimmed(metrics.utilization * 100, 1) + "%";
}

}  // namespace sched::sim
