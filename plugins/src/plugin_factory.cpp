#include "sched/plugins/plugin_factory.hpp"

#include <algorithm>
#include <cstring>

namespace sched::plugins {

void write_error(char* error, std::size_t size, std::string_view text) noexcept {
  if (!error || size == 0) return;
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

}  // namespace sched::plugins
