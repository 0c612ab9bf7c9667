#include "authorized_agents.hpp"

#include <spdlog/spdlog.h>

namespace sched::daemon {
namespace fs = std::filesystem;

AuthorizedAgentsFile::AuthorizedAgentsFile(fs::path path) : path_(std::move(path)) {
  if (auto error = reload()) throw std::runtime_error(*error);
}

std::optional<std::string> AuthorizedAgentsFile::reload_if_changed() {
  std::error_code ec;
  const auto time = fs::last_write_time(path_, ec);
  const auto size = ec ? 0 : fs::file_size(path_, ec);
  if (!ec && time == time_ && size == size_) return std::nullopt;
  return reload();
}

std::optional<std::string> AuthorizedAgentsFile::reload() {
  std::error_code ec;
  const auto time = fs::last_write_time(path_, ec);
  const auto size = ec ? 0 : fs::file_size(path_, ec);
  try {
    keys_ = AuthorizedAgents::load(path_);
  } catch (const std::exception& e) {
    time_ = time;  // told once per edit, not on every check
    size_ = size;
    return std::string(e.what());
  }
  time_ = time;
  size_ = size;
  spdlog::info("{}: {} agent keys", path_.string(), keys_.size());
  return std::nullopt;
}

}  // namespace sched::daemon
