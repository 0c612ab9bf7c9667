// The authorised-keys file of a running schedd (the format is
// sched/proto/authorized_keys.hpp; docs/security.md §3).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "sched/proto/authorized_keys.hpp"

namespace sched::daemon {

using proto::AuthorizedAgents;

// The file, read again when it changes (or on reload()). A file that no
// longer parses keeps the keys read last.
class AuthorizedAgentsFile {
 public:
  // Reads the file; throws std::runtime_error when it cannot (schedd does
  // not start with a broken file).
  explicit AuthorizedAgentsFile(std::filesystem::path path);

  const AuthorizedAgents& keys() const { return keys_; }
  const std::filesystem::path& path() const { return path_; }
  // Reads the file again when its time or size changed; returns an error
  // message when the new content is refused (the old keys stay), else
  // nothing.
  std::optional<std::string> reload_if_changed();
  // Reads the file again whatever its time (SIGHUP).
  std::optional<std::string> reload();

 private:
  std::filesystem::path path_;
  AuthorizedAgents keys_;
  std::filesystem::file_time_type time_{};
  std::uintmax_t size_ = 0;
};

}  // namespace sched::daemon
