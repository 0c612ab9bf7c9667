#include "prom_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace sched::daemon::http {
namespace {

bool name_char(char c, bool first, bool colon) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (letter || (colon && c == ':')) return true;
  return !first && c >= '0' && c <= '9';
}

bool valid_name(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, colon)) return false;
  }
  return true;
}

// HELP text escapes \ and newline only.
std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (std::isnan(bounds_[i]) || std::isinf(bounds_[i]) ||
        (i > 0 && !(bounds_[i] > bounds_[i - 1]))) {
      throw std::invalid_argument("histogram bounds must be finite and ascend strictly");
    }
  }
}

void Histogram::observe(double value) {
  // Buckets are "less than or equal": a value on a bound counts in it.
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  sum_ += value;
  ++count_;
}

bool valid_metric_name(std::string_view name) { return valid_name(name, true); }

bool valid_label_name(std::string_view name) {
  // Names starting with __ are reserved for Prometheus itself.
  return valid_name(name, false) && name.rfind("__", 0) != 0;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Whole numbers (counts, most gauges) without an exponent up to 2^53.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return fmt::format("{}", static_cast<std::int64_t>(value));
  }
  return fmt::format("{}", value);
}

void PromWriter::family(std::string_view name, MetricType type, std::string_view help) {
  if (!valid_metric_name(name)) {
    throw std::invalid_argument("bad metric name: " + std::string(name));
  }
  if (std::find(written_.begin(), written_.end(), name) != written_.end()) {
    throw std::invalid_argument("metric family written twice: " + std::string(name));
  }
  written_.emplace_back(name);
  current_ = std::string(name);
  type_ = type;
  out_ +=
      fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name, type_name(type));
}

void PromWriter::series(std::string_view suffix, const Labels& labels, const std::string* le,
                        double value) {
  if (current_.empty()) throw std::invalid_argument("a sample before its family");
  out_ += current_;
  out_ += suffix;
  if (!labels.empty() || le) {
    out_ += '{';
    bool first = true;
    for (const auto& [name, label_value] : labels) {
      if (!valid_label_name(name) || name == "le") {
        throw std::invalid_argument("bad label name: " + name);
      }
      if (!first) out_ += ',';
      first = false;
      out_ += name + "=\"" + escape_label_value(label_value) + '"';
    }
    if (le) out_ += std::string(first ? "" : ",") + "le=\"" + *le + '"';
    out_ += '}';
  }
  out_ += ' ';
  out_ += format_value(value);
  out_ += '\n';
}

void PromWriter::sample(const Labels& labels, double value) {
  if (type_ == MetricType::Histogram) {
    throw std::invalid_argument("a plain sample in histogram " + current_);
  }
  series("", labels, nullptr, value);
}

void PromWriter::histogram(const Labels& labels, const Histogram& histogram) {
  if (type_ != MetricType::Histogram) {
    throw std::invalid_argument("histogram series in non-histogram " + current_);
  }
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < histogram.bounds().size(); ++i) {
    cumulative += histogram.counts()[i];
    const std::string le = format_value(histogram.bounds()[i]);
    series("_bucket", labels, &le, static_cast<double>(cumulative));
  }
  const std::string inf = "+Inf";
  series("_bucket", labels, &inf, static_cast<double>(histogram.count()));
  series("_sum", labels, nullptr, histogram.sum());
  series("_count", labels, nullptr, static_cast<double>(histogram.count()));
}

}  // namespace sched::daemon::http
