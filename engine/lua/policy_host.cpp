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
    // A relative name without .lua may still name one in a subfolder of the
    // policy folder ("negotiation/socket_pack").
    if (name_or_path.ends_with(".lua") || fs::path(name_or_path).is_absolute()) {
      return std::nullopt;
    }
  }
  const fs::path candidate = fs::path(policy_dir) / (name_or_path + ".lua");
  if (fs::is_regular_file(candidate, ec)) return candidate.string();
  return std::nullopt;
}

PolicyHost::PolicyHost(Engine& engine, LuaPolicyOptions options, std::string partition)
    : engine_(engine), options_(std::move(options)), partition_(std::move(partition)) {
  if (options_.time_limit_s > 0 && !options_.clock) options_.clock = &engine_.clock();
}

std::shared_ptr<LuaPolicy> PolicyHost::current() const {
  if (partition_.empty()) return std::dynamic_pointer_cast<LuaPolicy>(engine_.shared_policy());
  // The partition's own policy only: not the engine's, which runs the
  // partition's passes while its own does not load.
  const auto index = engine_.partition_index(partition_);
  if (!index) return nullptr;
  return std::dynamic_pointer_cast<LuaPolicy>(
      engine_.partitions()[static_cast<std::size_t>(*index)].policy);
}

void PolicyHost::set_engine_policy(std::shared_ptr<LuaPolicy> policy) {
  if (partition_.empty()) {
    engine_.set_policy(std::move(policy));
  } else {
    (void)engine_.set_partition_policy(partition_, std::move(policy));  // the partition exists
  }
}

namespace {

std::optional<std::string> file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void PolicyHost::watch(const std::vector<PolicySource>& sources, bool keep_old) {
  std::map<std::string, std::string> watched;
  if (keep_old) {
    // A refused attempt: the files kept are taken as they are now, so that the
    // same broken edit is not retried at every check.
    for (const auto& [path, text] : watched_) watched[path] = file_text(path).value_or("");
  }
  for (const PolicySource& source : sources) watched[source.path] = source.text;
  watched_ = std::move(watched);
}

bool PolicyHost::changed() const {
  for (const auto& [path, text] : watched_) {
    if (file_text(path).value_or("") != text) return true;
  }
  return false;
}

Status PolicyHost::load(const std::string& path) {
  path_ = path;
  std::shared_ptr<LuaPolicy> policy;
  try {
    policy = LuaPolicy::load(path_, options_);
  } catch (const PolicyLoadError& e) {
    watch(e.sources(), false);
    if (e.sources().empty()) watched_[path_] = file_text(path_).value_or("");
    record(e.failure());
    return Status::invalid(e.what());
  }
  watch(policy->sources(), false);
  set_engine_policy(std::move(policy));
  return {};
}

PolicyCandidate PolicyHost::prepare(const std::string& path, const LuaPolicyOptions& options) {
  PolicyCandidate candidate;
  try {
    candidate.policy = LuaPolicy::load(path, options);
  } catch (const PolicyLoadError& e) {
    candidate.sources = e.sources();
    candidate.failure = e.failure();
    return candidate;
  }
  candidate.sources = candidate.policy->sources();
  if (const auto running = current()) {
    std::optional<PolicyFailure> error;
    auto saved = running->save(&error);
    if (error) {
      candidate.failure = error->prefixed("old policy: ");
      return candidate;
    }
    if (saved) {
      if (auto e = candidate.policy->restore(*saved)) {
        candidate.failure = std::move(e);
        return candidate;
      }
    }
  }
  candidate.dry = engine_.dry_pass_report(*candidate.policy, partition_);
  if (candidate.dry.failure) candidate.failure = candidate.dry.failure->prefixed("dry pass: ");
  return candidate;
}

PolicyCandidate PolicyHost::check(const std::string& path, const PolicyParams& params) {
  LuaPolicyOptions options = options_;
  options.params = params;
  return prepare(path, options);
}

void PolicyHost::install(PolicyCandidate candidate, const std::string& how) {
  watch(candidate.sources, false);
  set_engine_policy(candidate.policy);
  Event event;
  event.type = EventType::PolicyReloaded;
  event.partition = partition_;
  event.message = candidate.policy->name() + " from " + path_;
  if (!partition_.empty()) event.message = "partition " + partition_ + ": " + event.message;
  if (how != "reload") event.message += " (" + how + ")";
  spdlog::info("policy reloaded: {}", event.message);
  engine_.publish(std::move(event));
}

Status PolicyHost::refuse(const PolicyFailure& failure, const std::string& what) {
  ++failed_reloads_;
  record(failure);
  const std::string message =
      (partition_.empty() ? "" : "partition " + partition_ + ": ") + what + " refused, keeping " +
      (current() ? current()->name() : std::string("no policy")) + ": " + failure.message;
  spdlog::warn("{}", message);
  Event event = policy_error_event(failure, message);
  event.partition = partition_;
  engine_.publish(std::move(event));
  return Status::invalid(failure.message);
}

Status PolicyHost::reload() {
  PolicyCandidate candidate = prepare(path_, options_);
  if (candidate.failure) {
    watch(candidate.sources, true);
    return refuse(*candidate.failure, "reload of " + path_);
  }
  ++reloads_;
  install(std::move(candidate), "reload");
  return {};
}

Status PolicyHost::deploy(const std::string& path, const PolicyParams& params) {
  PolicyCandidate candidate = check(path, params);
  if (candidate.failure) return refuse(*candidate.failure, "policy set " + path);
  ++reloads_;
  path_ = path;
  options_.params = params;
  install(std::move(candidate), "set");
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
  if (path_.empty()) return false;
  // A module the policy required only in a pass is watched from then on.
  if (const auto running = current()) {
    for (const PolicySource& source : running->sources())
      watched_.emplace(source.path, source.text);
  }
  if (!changed()) return false;
  (void)reload();  // a refusal is published as policy.error and kept as last_failure()
  return true;
}

}  // namespace sched
