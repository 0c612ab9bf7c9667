#include "policy_versions.hpp"

#include <sodium.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sched::daemon {
namespace {

std::optional<std::string> file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::map<std::string, std::string> params_text(const PolicyParams& params) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : params) out[key] = param_text(value);
  return out;
}

}  // namespace

std::string policy_hash(const std::vector<PolicySource>& sources) {
  [[maybe_unused]] static const int ready = sodium_init();
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  for (const PolicySource& source : sources) {
    // Name and text, each ended by a NUL: no two file lists hash alike by
    // moving bytes between them.
    for (const std::string* part : {&source.name, &source.text}) {
      crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(part->data()),
                                part->size());
      const unsigned char nul = 0;
      crypto_hash_sha256_update(&state, &nul, 1);
    }
  }
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

PolicyParams version_params(const PolicyVersionRecord& version) {
  PolicyParams params;
  for (const auto& [key, value] : version.params) {
    if (auto parsed = parse_param(key + "=" + value)) params[parsed->first] = parsed->second;
  }
  return params;
}

PolicyVersions::PolicyVersions(StateStore& store, std::string versions_dir)
    : store_(store),
      versions_dir_(std::move(versions_dir)),
      current_(store_.policy_version_heads()) {}

std::uint64_t PolicyVersions::current(const std::string& partition) const {
  const auto it = current_.find(partition);
  return it == current_.end() ? 0 : it->second;
}

std::optional<PolicyVersionRecord> PolicyVersions::before_current(
    const std::string& partition) const {
  const std::uint64_t now = current(partition);
  if (now == 0) return std::nullopt;
  return store_.last_policy_version(partition, now);
}

std::uint64_t PolicyVersions::note(const PolicyHost& host, const std::string& user,
                                   const std::string& how, double now) {
  const std::string& partition = host.partition();
  std::uint64_t& current = current_[partition];
  const auto policy = host.current();
  if (!policy) return current;
  PolicyVersionRecord record;
  record.time = now;
  record.user = user;
  record.how = how;
  record.name = policy->name();
  record.path = host.path();
  record.hash = policy_hash(policy->sources());
  record.params = params_text(host.params());
  record.partition = partition;
  for (const PolicySource& source : policy->sources()) {
    record.files.push_back({source.name, source.path, source.text});
  }
  if (const auto last = store_.last_policy_version(partition)) {
    // A restart loads the last version again: the same version, not a new one.
    const bool same = last->hash == record.hash && last->params == record.params;
    if ((same && how == "load") || (same && last->path == record.path && how == "reload")) {
      version_of_[policy.get()] = current;
      return current;
    }
  }
  current = store_.append_policy_version(std::move(record));
  version_of_[policy.get()] = current;
  return current;
}

std::uint64_t PolicyVersions::note_revert(const PolicyHost& host, double now) {
  std::uint64_t& current = current_[host.partition()];
  const auto policy = host.current();
  if (!policy) return current;
  const auto known = version_of_.find(policy.get());
  if (known == version_of_.end()) return note(host, "schedd", "revert", now);
  if (known->second == current) return current;
  if (auto record = store_.policy_version(known->second)) {
    record->time = now;
    record->user = "schedd";
    record->how = "revert to " + std::to_string(known->second);
    current = store_.append_policy_version(std::move(*record));
    version_of_[policy.get()] = current;
    return current;
  }
  return note(host, "schedd", "revert", now);
}

std::string PolicyVersions::materialize(const PolicyVersionRecord& version) const {
  namespace fs = std::filesystem;
  if (version.files.empty()) throw std::runtime_error("policy version has no files");
  bool intact = true;
  for (const PolicyVersionFile& file : version.files) {
    if (file_text(file.path) != file.text) intact = false;
  }
  if (intact) return version.path;
  const fs::path root = fs::path(versions_dir_) / std::to_string(version.version);
  for (const PolicyVersionFile& file : version.files) {
    const fs::path target = root / file.name;
    // Names come from our own journal ("x.lua", "lib/a/b.lua"), never "..".
    if (file.name.empty() || file.name.find("..") != std::string::npos || file.name[0] == '/') {
      throw std::runtime_error("policy version " + std::to_string(version.version) +
                               ": bad file name " + file.name);
    }
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << file.text;
    if (!out.flush()) {
      throw std::runtime_error("cannot write " + target.string() + " (policy version " +
                               std::to_string(version.version) + ")");
    }
  }
  return (root / version.files.front().name).string();
}

}  // namespace sched::daemon
