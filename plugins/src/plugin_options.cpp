#include "sched/plugins/plugin_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace sched::plugins {
namespace {

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

PluginOptions parse_plugin_options(std::string_view text, const std::vector<std::string>& known) {
  PluginOptions out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;  // "a=1," or ",,"
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw std::invalid_argument("option '" + std::string(item) + "' is not key=value");
    }
    const std::string key(trim(item.substr(0, eq)));
    if (key.empty()) throw std::invalid_argument("option '" + std::string(item) + "' has no key");
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw std::invalid_argument("unknown option '" + key +
                                  "' (known: " + (list.empty() ? "none" : list) + ")");
    }
    if (!out.emplace(key, std::string(trim(item.substr(eq + 1)))).second) {
      throw std::invalid_argument("option '" + key + "' given twice");
    }
  }
  return out;
}

double option_number(const PluginOptions& options, const std::string& key, double fallback) {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  const char* begin = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(begin, &end);
  if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
    throw std::invalid_argument("option " + key + "=" + it->second + " is not a number");
  }
  return value;
}

}  // namespace sched::plugins
