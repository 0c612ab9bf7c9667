#include "sched/install_layout.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sched::layout {
namespace fs = std::filesystem;

std::optional<std::string> installed_prefix_of(const std::string& program) {
  const fs::path dir = fs::path(program).parent_path();
  const fs::path prefix = dir.parent_path();
  const bool in_bin = dir == prefix / SCHED_INSTALL_BINDIR || dir == prefix / SCHED_INSTALL_SBINDIR;
  std::error_code ec;
  if (!in_bin || !fs::is_directory(prefix / SCHED_INSTALL_DATADIR / "sched", ec)) {
    return std::nullopt;
  }
  return prefix.string();
}

std::optional<std::string> installed_prefix() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return installed_prefix_of(self.string());
}

std::optional<std::string> installed_policy_dir() {
  const auto prefix = installed_prefix();
  if (!prefix) return std::nullopt;
  return (fs::path(*prefix) / SCHED_INSTALL_DATADIR / "sched/policies").string();
}

std::string policy_dir_or(const std::string& fallback) {
  if (const char* dir = std::getenv("SCHED_POLICY_DIR"); dir && *dir) return dir;
  if (auto installed = installed_policy_dir()) return *installed;
  return fallback;
}

std::optional<std::string> installed_plugin_dir() {
  const auto prefix = installed_prefix();
  if (!prefix) return std::nullopt;
  return (fs::path(*prefix) / SCHED_INSTALL_LIBDIR / "sched/plugins").string();
}

}  // namespace sched::layout
