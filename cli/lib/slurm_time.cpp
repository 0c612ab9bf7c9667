#include "slurm_time.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <utility>
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

namespace {

// Digits only, as a number; nothing otherwise.
std::optional<long long> whole(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// HH:MM or HH:MM:SS into `tm` (seconds 0 when absent).
bool read_clock(std::string_view text, std::tm& tm) {
  std::array<long long, 3> parts{0, 0, 0};
  std::size_t count = 0;
  while (true) {
    const auto colon = text.find(':');
    if (count == 3) return false;
    const auto part = whole(text.substr(0, colon));
    if (!part || text.substr(0, colon).size() > 2) return false;
    parts[count++] = *part;
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (count < 2 || parts[0] > 23 || parts[1] > 59 || parts[2] > 59) return false;
  tm.tm_hour = static_cast<int>(parts[0]);
  tm.tm_min = static_cast<int>(parts[1]);
  tm.tm_sec = static_cast<int>(parts[2]);
  return true;
}

// Local midnight of the day `now` falls in, as broken-down time.
std::tm local_day(double now) {
  const auto when = static_cast<std::time_t>(now);
  std::tm tm{};
  localtime_r(&when, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return tm;
}

double epoch(std::tm tm) {
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

// A time of day: today, or tomorrow when it has passed.
double next_at(double now, int hour, int minute = 0, int second = 0) {
  std::tm tm = local_day(now);
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  double at = epoch(tm);
  if (at <= now) {
    tm.tm_mday += 1;
    at = epoch(tm);
  }
  return at;
}

}  // namespace

std::optional<double> parse_begin_time(std::string_view text, double now) {
  std::string word(text);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word == "now") return now;
  if (word.starts_with("now+")) {
    std::string_view rest = std::string_view(word).substr(4);
    const auto digits = rest.find_first_not_of("0123456789");
    const auto count = whole(rest.substr(0, digits));
    if (!count) return std::nullopt;
    const std::string_view unit = digits == std::string_view::npos ? "" : rest.substr(digits);
    double scale = 0;
    for (const auto& [names, seconds] :
         std::array<std::pair<std::array<std::string_view, 3>, double>, 5>{{
             {{"", "s", "seconds"}, 1},
             {{"minutes", "min", "m"}, 60},
             {{"hours", "hour", "h"}, 3600},
             {{"days", "day", "d"}, 86400},
             {{"weeks", "week", "w"}, 604800},
         }}) {
      for (std::string_view name : names) {
        if (unit == name) scale = seconds;
      }
    }
    if (unit == "second" || unit == "minute") scale = unit == "second" ? 1 : 60;
    if (scale == 0) return std::nullopt;
    return now + static_cast<double>(*count) * scale;
  }
  if (word == "midnight" || word == "tomorrow") {
    std::tm tm = local_day(now);
    tm.tm_mday += 1;
    return epoch(tm);
  }
  if (word == "today") return epoch(local_day(now));
  if (word == "noon") return next_at(now, 12);
  if (word == "teatime") return next_at(now, 16);
  std::tm tm{};
  if (read_clock(word, tm)) return next_at(now, tm.tm_hour, tm.tm_min, tm.tm_sec);
  // YYYY-MM-DD[THH:MM[:SS]]
  const std::string_view date = std::string_view(word).substr(0, word.find('t'));
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return std::nullopt;
  const auto year = whole(date.substr(0, 4));
  const auto month = whole(date.substr(5, 2));
  const auto day = whole(date.substr(8, 2));
  if (!year || !month || !day || *month < 1 || *month > 12 || *day < 1 || *day > 31) {
    return std::nullopt;
  }
  tm = std::tm{};
  tm.tm_year = static_cast<int>(*year - 1900);
  tm.tm_mon = static_cast<int>(*month - 1);
  tm.tm_mday = static_cast<int>(*day);
  if (word.size() > date.size()) {
    if (!read_clock(std::string_view(word).substr(date.size() + 1), tm)) return std::nullopt;
  }
  std::tm check = tm;
  const double at = epoch(tm);
  // mktime moves 2026-02-31 to March: such a date is not one.
  const auto when = static_cast<std::time_t>(at);
  std::tm back{};
  localtime_r(&when, &back);
  if (back.tm_mon != check.tm_mon || back.tm_mday != check.tm_mday) return std::nullopt;
  return at;
}

std::string format_exit_code(int exit_status) {
  return exit_status >= 0 ? std::to_string(exit_status) + ":0"
                          : "0:" + std::to_string(-static_cast<long long>(exit_status));
}

}  // namespace sched::cli
