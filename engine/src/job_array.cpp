#include "sched/job_array.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

namespace sched {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace

Result<JobArraySpec> parse_job_array(std::string_view text, int limit) {
  // Never above Slurm's ceiling, whatever a config says.
  const int max_array_size = std::min(limit, kMaxArraySizeCeiling);
  const std::string quoted = "array '" + std::string(text) + "': ";
  const auto bad = [&](const std::string& why) { return Status::invalid(quoted + why); };
  if (text.empty()) return bad("empty");
  JobArraySpec spec;
  std::string_view body = text;
  if (auto percent = text.find('%'); percent != std::string_view::npos) {
    const std::string_view limit = text.substr(percent + 1);
    const auto throttle = parse_int(limit);
    if (!throttle || *throttle == 0) {
      return bad("throttle '%" + std::string(limit) + "' is not a positive number");
    }
    spec.throttle = *throttle;
    body = text.substr(0, percent);
  }
  if (body.empty()) return bad("no indices");
  // Every index lies below max_array_size: a bit per possible index finds
  // the duplicates in time linear in the indices listed.
  std::vector<bool> seen(static_cast<std::size_t>(std::max(max_array_size, 0)));
  int parts = 0;
  int range_step = 0;
  while (true) {
    const auto comma = body.find(',');
    const std::string_view part = body.substr(0, comma);
    ++parts;
    if (part.empty()) return bad("empty element");
    std::string_view range = part;
    int step = 1;
    if (auto colon = part.find(':'); colon != std::string_view::npos) {
      const auto parsed = parse_int(part.substr(colon + 1));
      if (!parsed || *parsed == 0) {
        return bad("step in '" + std::string(part) + "' must be a positive number");
      }
      step = *parsed;
      range = part.substr(0, colon);
    }
    const auto dash = range.find('-');
    const auto first = parse_int(range.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_int(range.substr(dash + 1));
    if (!first || !last) return bad("'" + std::string(part) + "' is not an index or range");
    if (*last < *first) return bad("range " + std::string(range) + " is reversed");
    if (*last >= max_array_size) {
      return bad("index " + std::to_string(*last) + " is above the limit (max_array_size " +
                 std::to_string(max_array_size) + ": indices 0-" +
                 std::to_string(max_array_size - 1) + ")");
    }
    for (long long i = *first; i <= *last; i += step) {
      if (seen[static_cast<std::size_t>(i)]) {
        return bad("index " + std::to_string(i) + " appears twice");
      }
      seen[static_cast<std::size_t>(i)] = true;
    }
    range_step = step;
    if (comma == std::string_view::npos) break;
    body = body.substr(comma + 1);
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) spec.indices.push_back(static_cast<int>(i));
  }
  spec.step = parts == 1 ? range_step : 0;
  return spec;
}

std::string array_task_name(long long array_id, int index) {
  return std::to_string(array_id) + "_" + std::to_string(index);
}

}  // namespace sched
