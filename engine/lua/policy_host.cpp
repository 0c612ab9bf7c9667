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
    : engine_(engine), options_(std::move(options)) {
  if (options_.time_limit_s > 0 && !options_.clock) options_.clock = &engine_.clock();
}

std::shared_ptr<LuaPolicy> PolicyHost::current() const {
  return std::dynamic_pointer_cast<LuaPolicy>(engine_.shared_policy());
}

std::string PolicyHost::fingerprint() const {
  // The content itself: an edit within the same second (same mtime) still counts.
  std::ifstream in(path_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::to_string(std::hash<std::string>{}(text.str())) + ":" +
         std::to_string(text.str().size());
}

Status PolicyHost::load(const std::string& path) {
  path_ = path;
  seen_fingerprint_ = fingerprint();
  std::shared_ptr<LuaPolicy> policy;
  try {
    policy = LuaPolicy::load(path_, options_);
  } catch (const PolicyLoadError& e) {
    record(e.failure());
    return Status::invalid(e.what());
  }
  engine_.set_policy(std::move(policy));
  return {};
}

std::optional<PolicyFailure> PolicyHost::try_replace() {
  std::shared_ptr<LuaPolicy> fresh;
  try {
    fresh = LuaPolicy::load(path_, options_);
  } catch (const PolicyLoadError& e) {
    return e.failure();
  }
  if (const auto running = current()) {
    std::optional<PolicyFailure> error;
    auto saved = running->save(&error);
    if (error) return error->prefixed("old policy: ");
    if (saved) {
      if (auto e = fresh->restore(*saved)) return e;
    }
  }
  if (auto e = engine_.dry_pass(*fresh)) return e->prefixed("dry pass: ");
  engine_.set_policy(std::move(fresh));
  return std::nullopt;
}

Status PolicyHost::reload() {
  seen_fingerprint_ = fingerprint();
  const auto failure = try_replace();
  if (failure) {
    ++failed_reloads_;
    record(*failure);
    const std::string message = "reload of " + path_ + " refused, keeping " +
                                (current() ? current()->name() : std::string("no policy")) + ": " +
                                failure->message;
    spdlog::warn("{}", message);
    engine_.publish(policy_error_event(*failure, message));
    return Status::invalid(failure->message);
  }
  ++reloads_;
  Event event;
  event.type = EventType::PolicyReloaded;
  event.message = current()->name() + " from " + path_;
  spdlog::info("policy reloaded: {}", event.message);
  engine_.publish(std::move(event));
  return {};
}

void PolicyHost::record(PolicyFailure failure) {
  failure.time = engine_.now();
  last_failure_ = std::move(failure);
}

std::optional<PolicyFailure> PolicyHost::last_failure() const {
  // The later of the host's own (load, reload) and the engine's (a pass).
  const auto& pass = engine_.stats().last_failure;
  if (pass && (!last_failure_ || pass->time >= last_failure_->time)) return pass;
  return last_failure_;
}

bool PolicyHost::reload_if_changed() {
  if (path_.empty() || fingerprint() == seen_fingerprint_) return false;
  (void)reload();  // a refusal is published as policy.error and kept as last_failure()
  return true;
}

}  // namespace sched
