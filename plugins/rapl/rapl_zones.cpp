#include "rapl_zones.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace sched::plugins::rapl {
namespace {

constexpr std::string_view kPrefix = "intel-rapl:";

// The first line of a small sysfs file; nothing with `error` set on failure.
std::optional<std::string> read_line(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  char buffer[128];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    if (error) *error = path + ": " + std::strerror(read_errno);
    return std::nullopt;
  }
  std::string text(buffer, static_cast<std::size_t>(n));
  text.erase(std::find(text.begin(), text.end(), '\n'), text.end());
  return text;
}

std::optional<std::uint64_t> parse_uint(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// How many ':'-separated numbers follow "intel-rapl:": 1 for a package
// zone, 2 for a sub-zone, 0 for anything else (the control type itself).
int zone_depth(std::string_view id) {
  if (!id.starts_with(kPrefix)) return 0;
  id.remove_prefix(kPrefix.size());
  int depth = 0;
  while (true) {
    const std::size_t colon = id.find(':');
    const std::string_view part = id.substr(0, colon);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos) return 0;
    ++depth;
    if (colon == std::string_view::npos) return depth;
    id.remove_prefix(colon + 1);
  }
}

bool counted(int depth, const std::string& name) {
  return (depth == 1 && name != "psys") || (depth == 2 && name == "dram");
}

}  // namespace

std::vector<Zone> find_zones(const std::string& root) {
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec);
  if (ec) throw std::runtime_error("no RAPL zones: cannot list " + root + ": " + ec.message());
  std::vector<Zone> zones;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) throw std::runtime_error("no RAPL zones: cannot list " + root + ": " + ec.message());
    const std::string id = it->path().filename().string();
    const int depth = zone_depth(id);
    if (depth == 0) continue;
    const std::string dir = it->path().string();
    Zone zone{id, read_line(dir + "/name", nullptr).value_or(""), dir + "/energy_uj", 0};
    if (!counted(depth, zone.name)) continue;
    const auto max_text = read_line(dir + "/max_energy_range_uj", nullptr);
    zone.max_uj = max_text ? parse_uint(*max_text).value_or(0) : 0;
    zones.push_back(std::move(zone));
  }
  if (zones.empty()) {
    throw std::runtime_error(root + " has no intel-rapl package zone");
  }
  std::sort(zones.begin(), zones.end(), [](const Zone& a, const Zone& b) { return a.id < b.id; });
  return zones;
}

std::optional<std::uint64_t> read_energy_uj(const Zone& zone, std::string* error) {
  const auto text = read_line(zone.energy_path, error);
  if (!text) return std::nullopt;
  const auto value = parse_uint(*text);
  if (!value && error) *error = zone.energy_path + ": '" + *text + "' is not a counter";
  return value;
}

std::optional<std::uint64_t> energy_delta_uj(std::uint64_t before, std::uint64_t after,
                                             std::uint64_t max_uj) {
  if (after >= before) return after - before;
  // The counter runs from 0 to max_uj and starts again at 0.
  if (max_uj == 0 || before > max_uj) return std::nullopt;
  return (max_uj - before) + after;
}

}  // namespace sched::plugins::rapl
