// A writer of Prometheus' text exposition format (version 0.0.4,
// https://prometheus.io/docs/instrumenting/exposition_formats/): families of
// counters, gauges and fixed-bucket histograms with labels. Debian 12 has no
// prometheus-cpp; this is the small part of it schedd needs (docs/metrics.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sched::daemon::http {

enum class MetricType { Counter, Gauge, Histogram };

// Label name → value, in the order written.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Observations counted into fixed buckets (upper bounds, ascending; +Inf is
// implied).
class Histogram {
 public:
  // Throws std::invalid_argument unless the bounds ascend strictly.
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);

  const std::vector<double>& bounds() const { return bounds_; }
  // Per bucket, not cumulative; the last one is +Inf's.
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class PromWriter {
 public:
  // Starts a family: its # HELP and # TYPE lines. A name is
  // [a-zA-Z_:][a-zA-Z0-9_:]*; a family is written once (std::invalid_argument
  // otherwise: both are bugs of the caller, not of input).
  void family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current counter or gauge family.
  void sample(const Labels& labels, double value);
  // The current histogram family's series for `labels`: _bucket (cumulative,
  // with le), _sum and _count.
  void histogram(const Labels& labels, const Histogram& histogram);

  const std::string& text() const { return out_; }

 private:
  void series(std::string_view suffix, const Labels& labels, const std::string* le, double value);

  std::string out_;
  std::string current_;
  MetricType type_ = MetricType::Gauge;
  std::vector<std::string> written_;
};

// A label value as the format quotes it: \ " and newline escaped.
std::string escape_label_value(std::string_view value);
// A number as the format writes it: shortest round-trip form, +Inf, -Inf, NaN.
std::string format_value(double value);
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

}  // namespace sched::daemon::http
