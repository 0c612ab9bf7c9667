#include "sched/policy_host.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sched/engine.hpp"

namespace sched {

std::string default_policy_dir() {
  if (const char* dir = std::getenv("SCHED_POLICY_DIR"); dir && *dir) return dir;
  return SCHED_SOURCE_POLICY_DIR;
}

std::optional<std::string> resolve_policy_path(const std::string& name_or_path,
                                               const std::string& policy_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".lua")) {
    if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
    return std::nullopt;
  }
  const fs::path candidate = fs::path(policy_dir) / (name_or_path + ".lua");
  if (fs::is_regular_file(candidate, ec)) return candidate.string();
  return std::nullopt;
}

PolicyHost::PolicyHost(Engine& engine, LuaPolicyOptions options)
    : engine_(engine), options_(std::move(options)) {}

std::string PolicyHost::fingerprint() const {
  // The content itself: an edit within the same second (same mtime) still counts.
  std::ifstream in(path_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::to_string(std::hash<std::string>{}(text.str())) + ":" +
         std::to_string(text.str().size());
}

std::optional<std::string> PolicyHost::load(const std::string& path) {
  path_ = path;
  seen_fingerprint_ = fingerprint();
  try {
    current_ = LuaPolicy::load(path_, options_);
  } catch (const PolicyLoadError& e) {
    return std::string(e.what());
  }
  engine_.set_policy(current_);
  return std::nullopt;
}

std::optional<std::string> PolicyHost::try_replace() {
  std::shared_ptr<LuaPolicy> fresh;
  try {
    fresh = LuaPolicy::load(path_, options_);
  } catch (const PolicyLoadError& e) {
    return std::string(e.what());
  }
  if (current_) {
    std::string error;
    auto saved = current_->save(&error);
    if (!error.empty()) return "old policy: " + error;
    if (saved) {
      if (auto e = fresh->restore(*saved)) return *e;
    }
  }
  if (auto e = engine_.dry_pass(*fresh)) return "dry pass: " + *e;
  current_ = std::move(fresh);
  engine_.set_policy(current_);
  return std::nullopt;
}

std::optional<std::string> PolicyHost::reload() {
  seen_fingerprint_ = fingerprint();
  auto error = try_replace();
  Event event;
  if (error) {
    ++failed_reloads_;
    event.type = EventType::PolicyError;
    event.message = "reload of " + path_ + " refused, keeping " +
                    (current_ ? current_->name() : std::string("no policy")) + ": " + *error;
    spdlog::warn("{}", event.message);
  } else {
    ++reloads_;
    event.type = EventType::PolicyReloaded;
    event.message = current_->name() + " from " + path_;
    spdlog::info("policy reloaded: {}", event.message);
  }
  engine_.publish(std::move(event));
  return error;
}

bool PolicyHost::reload_if_changed() {
  if (path_.empty() || fingerprint() == seen_fingerprint_) return false;
  reload();
  return true;
}

}  // namespace sched
