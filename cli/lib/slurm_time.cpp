#include "slurm_time.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

namespace sched::cli {
namespace {

// Digits only; at most 9 of them so that no sum below can overflow.
std::optional<std::int64_t> parse_field(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;  // from_chars would take a sign
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::vector<std::int64_t>> parse_fields(std::string_view text) {
  std::vector<std::int64_t> fields;
  while (true) {
    const auto colon = text.find(':');
    const auto field = parse_field(text.substr(0, colon));
    if (!field) return std::nullopt;
    fields.push_back(*field);
    if (colon == std::string_view::npos) return fields;
    text.remove_prefix(colon + 1);
  }
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string two_digits(std::int64_t value) {
  std::array<char, 24> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%02lld", static_cast<long long>(value));
  return buffer.data();
}

}  // namespace

std::optional<std::int64_t> parse_duration(std::string_view text) {
  if (equals_ignoring_case(text, "unlimited") || equals_ignoring_case(text, "infinite")) return 0;
  const auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    // D-H, D-H:M, D-H:M:S
    const auto days = parse_field(text.substr(0, dash));
    const auto rest = parse_fields(text.substr(dash + 1));
    if (!days || !rest || rest->size() > 3) return std::nullopt;
    const auto& f = *rest;
    if (f[0] >= 24 || (f.size() > 1 && f[1] >= 60) || (f.size() > 2 && f[2] >= 60)) {
      return std::nullopt;
    }
    return *days * 86400 + f[0] * 3600 + (f.size() > 1 ? f[1] * 60 : 0) + (f.size() > 2 ? f[2] : 0);
  }
  const auto fields = parse_fields(text);
  if (!fields) return std::nullopt;
  const auto& f = *fields;
  switch (f.size()) {
    case 1:  // M
      return f[0] * 60;
    case 2:  // M:S
      if (f[1] >= 60) return std::nullopt;
      return f[0] * 60 + f[1];
    case 3:  // H:M:S
      if (f[1] >= 60 || f[2] >= 60) return std::nullopt;
      return f[0] * 3600 + f[1] * 60 + f[2];
    default:
      return std::nullopt;
  }
}

std::string format_duration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "N/A";
  const auto total = static_cast<std::int64_t>(seconds);
  const auto days = total / 86400;
  const auto hours = total / 3600 % 24;
  const auto minutes = total / 60 % 60;
  const auto secs = total % 60;
  if (days > 0) {
    return std::to_string(days) + "-" + two_digits(hours) + ":" + two_digits(minutes) + ":" +
           two_digits(secs);
  }
  if (hours > 0) {
    return std::to_string(hours) + ":" + two_digits(minutes) + ":" + two_digits(secs);
  }
  return std::to_string(minutes) + ":" + two_digits(secs);
}

std::string format_time_limit(double seconds) {
  return seconds <= 0 ? "UNLIMITED" : format_duration(seconds);
}

std::string format_elapsed(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return "N/A";
  const auto total = static_cast<std::int64_t>(seconds);
  const auto days = total / 86400;
  std::string clock = two_digits(total / 3600 % 24) + ":" + two_digits(total / 60 % 60) + ":" +
                      two_digits(total % 60);
  return days > 0 ? std::to_string(days) + "-" + clock : clock;
}

std::string format_timestamp(double epoch_seconds) {
  if (epoch_seconds < 0 || !std::isfinite(epoch_seconds)) return "N/A";
  const auto when = static_cast<std::time_t>(epoch_seconds);
  std::tm local{};
  if (localtime_r(&when, &local) == nullptr) return "N/A";
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%S", &local);
  return buffer.data();
}

std::string format_exit_code(int exit_status) {
  return exit_status >= 0 ? std::to_string(exit_status) + ":0"
                          : "0:" + std::to_string(-static_cast<long long>(exit_status));
}

}  // namespace sched::cli
