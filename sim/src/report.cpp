#include "sched/sim/report.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

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

void append_integer(std::string& out, long long value) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, static_cast<std::size_t>(end - buffer));
}

// A fixed-point rendering with `decimals` decimals, trailing zeros (and a
// bare decimal point) removed.
std::string format_trimmed(double value, int decimals) {
  // to_chars prints what printf's %.*f prints, several times cheaper: jobs.csv
  // of a 10k-job replay spent a tenth of `sched sim` in snprintf.
  char buffer[400];  // DBL_MAX in fixed notation with decimals to spare
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return std::to_string(value);
  std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  if (text.find('.') != std::string_view::npos) {
    text.remove_suffix(text.size() - text.find_last_not_of('0') - 1);
    if (text.back() == '.') text.remove_suffix(1);
  }
  if (text == "-0") return "0";
  return std::string(text);
}

// Appends what format_seconds(seconds) returns, without a string per
// number: whole seconds, nearly all of them in a trace, as an integer.
void append_seconds(std::string& out, double seconds) {
  // Below 2^53 a whole double is exact as an integer, and fixed notation
  // prints it with nothing after the point (trimmed); -0 prints as 0.
  if (std::isfinite(seconds) && std::fabs(seconds) < 9007199254740992.0 &&
      std::floor(seconds) == seconds) {
    append_integer(out, static_cast<long long>(seconds));
    return;
  }
  out += format_seconds(seconds);
}

}  // namespace

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return std::isnan(seconds) ? "nan" : (seconds > 0 ? "inf" : "-inf");
  return format_trimmed(seconds, 6);
}

void write_jobs_csv(const std::string& path, const std::vector<JobRecord>& jobs) {
  // The text in one buffer, written once: a stream insertion per field
  // cost a replay of lublin_256 a twentieth of its time.
  std::string text = "id,submit,start,end,nodes,kind,state,resizes,start_nodes,end_nodes\n";
  text.reserve(jobs.size() * 64 + text.size());
  for (const auto& job : jobs) {
    append_integer(text, job.id);
    text += ',';
    append_seconds(text, job.submit);
    text += ',';
    if (job.start >= 0) append_seconds(text, job.start);
    text += ',';
    if (job.end >= 0) append_seconds(text, job.end);
    text += ',';
    append_integer(text, job.nodes);
    text += ',';
    text += to_string(job.kind);
    text += ',';
    text += to_string(job.state);
    text += ',';
    append_integer(text, job.resizes);
    text += ',';
    append_integer(text, job.start_nodes);
    text += ',';
    append_integer(text, job.end_nodes);
    text += '\n';
  }
  auto out = open_for_writing(path);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
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
