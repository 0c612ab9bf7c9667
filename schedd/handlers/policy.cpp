// The scheduling policy: what runs, a reload on request, and the
// administrator's workflow (issue 22): check a candidate, set one live, list
// the deployed versions and roll back to one.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "policy_check.hpp"
#include "policy_info.hpp"
#include "policy_snapshot.hpp"
#include "policy_versions.hpp"
#include "sched/convert/snapshot_convert.hpp"
#include "sched/lua_policy.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/error.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

// policy.info's body; policy.reload answers with the same (docs/protocol.md §4).
proto::PolicyInfoReply info_reply(const PolicyHost& host) {
  proto::PolicyInfoReply info = policy_info_reply(host);
  for (const auto& [key, value] : host.params()) info.params[key] = param_text(value);
  return info;
}

// The host of a request's partition's own policy, or of the [scheduler]
// policy when it names none.
PolicyHost& host_of(const DaemonParts& daemon, const std::optional<std::string>& partition) {
  if (!partition || partition->empty()) return daemon.policy;
  const auto it = daemon.partition_policies.find(*partition);
  if (it != daemon.partition_policies.end()) return *it->second;
  if (!daemon.engine.partition_index(*partition)) {
    throw proto::ProtoError(proto::code::kNotFound, "no partition " + *partition);
  }
  throw proto::ProtoError(proto::code::kInvalid,
                          "partition " + *partition +
                              " has no policy of its own (the [scheduler] policy runs its "
                              "passes): give it one with policy = \"...\" in [partitions." +
                              *partition + "]");
}

// A policy.check or policy.set request's file (a path, or a name in the
// policy folder) and parameters: those given, else the running policy's.
std::pair<std::string, PolicyParams> requested_policy(const DaemonParts& daemon,
                                                      const proto::PolicyFileRequest& request) {
  const auto path = resolve_policy_path(request.policy, daemon.config.policy_dir);
  if (!path) {
    throw proto::ProtoError(proto::code::kNotFound,
                            "no policy " + request.policy + " (neither a file nor " +
                                daemon.config.policy_dir + "/" + request.policy + ".lua)");
  }
  if (request.params.empty()) return {*path, host_of(daemon, request.partition).params()};
  PolicyParams params;
  for (const auto& [key, value] : request.params) {
    const auto parsed = parse_param(key + "=" + value);
    if (!parsed) throw proto::ProtoError(proto::code::kInvalid, "bad parameter '" + key + "'");
    params[parsed->first] = parsed->second;
  }
  return {*path, params};
}

}  // namespace

void policy_info(const Message& m) { m.reply(info_reply(m.daemon.policy)); }

void policy_reload(const Message& m) {
  require_admin(m, "reloading the policy");
  if (const Status status = m.daemon.policy.reload(); !status.ok()) throw_status(status);
  m.daemon.versions.note(m.daemon.policy, caller_of(m).user, "reload", m.daemon.clock.now());
  m.reply(info_reply(m.daemon.policy));
}

// ---- issue 22

void policy_check(const Message& m) {
  // schedd reads the file and its modules with its own rights and runs the
  // candidate on its loop: for administrators (docs/security.md §4).
  require_admin(m, "checking a policy");
  const auto request = m.body<proto::PolicyFileRequest>();
  const auto [path, params] = requested_policy(m.daemon, request);
  const PolicyCandidate candidate = host_of(m.daemon, request.partition).check(path, params);
  m.reply(policy_check_reply(candidate, path, m.daemon.engine));
}

void policy_set(const Message& m) {
  require_admin(m, "setting the policy");
  const auto request = m.body<proto::PolicyFileRequest>();
  PolicyHost& host = host_of(m.daemon, request.partition);
  const auto [path, params] = requested_policy(m.daemon, request);
  if (const Status status = host.deploy(path, params); !status.ok()) throw_status(status);
  m.daemon.versions.note(host, caller_of(m).user, "set", m.daemon.clock.now());
  m.reply(info_reply(host));
}

// Anyone, as policy.info: names, paths and hashes, no file text.
void policy_history(const Message& m) {
  proto::PolicyHistoryReply reply;
  for (const PolicyVersionRecord& version : m.daemon.versions.history()) {
    proto::PolicyVersionInfo info;
    info.version = version.version;
    info.time = version.time;
    info.user = version.user;
    info.how = version.how;
    info.name = version.name;
    info.path = version.path;
    info.hash = version.hash;
    info.params = version.params;
    for (const PolicyVersionFile& file : version.files) info.files.push_back(file.name);
    info.current = version.version == m.daemon.versions.current(version.partition);
    if (!version.partition.empty()) info.partition = version.partition;
    reply.versions.push_back(std::move(info));
  }
  m.reply(reply);
}

void policy_rollback(const Message& m) {
  require_admin(m, "rolling the policy back");
  const auto request = m.body<proto::PolicyRollbackRequest>();
  const std::string whose = request.partition.value_or("");
  // A version names its partition; without one, the version before the
  // current one of the partition asked for (or of [scheduler]).
  const std::optional<PolicyVersionRecord> target =
      request.version ? m.daemon.versions.version(*request.version)
                      : m.daemon.versions.before_current(whose);
  if (!target) {
    throw proto::ProtoError(proto::code::kNotFound,
                            request.version
                                ? "no policy version " + std::to_string(*request.version)
                                : "no policy version before the current one" +
                                      (whose.empty() ? std::string() : " of partition " + whose));
  }
  if (request.partition && target->partition != whose) {
    throw proto::ProtoError(
        proto::code::kInvalid,
        "policy version " + std::to_string(target->version) + " is " +
            (target->partition.empty() ? std::string("the [scheduler] policy's")
                                       : "partition " + target->partition + "'s") +
            ", not " + (whose.empty() ? "[scheduler]'s" : whose + "'s"));
  }
  PolicyHost& host =
      host_of(m.daemon, target->partition.empty() ? std::nullopt
                                                  : std::optional<std::string>(target->partition));
  std::string path;
  try {
    path = m.daemon.versions.materialize(*target);
  } catch (const std::exception& e) {
    throw proto::ProtoError(proto::code::kInvalid, e.what());
  }
  if (const Status status = host.deploy(path, version_params(*target)); !status.ok()) {
    throw_status(status);
  }
  m.daemon.versions.note(host, caller_of(m).user, "rollback to " + std::to_string(target->version),
                         m.daemon.clock.now());
  m.reply(info_reply(host));
}

// The live state for `sched policy try` (issue 22 item 3): for
// administrators, as policy.check, since it holds every user's jobs and the
// policy's code.
void policy_snapshot(const Message& m) {
  require_admin(m, "taking a policy snapshot");
  const auto request = m.body<proto::PolicySnapshotRequest>();
  constexpr double kDefaultWindowS = 2 * 3600;
  constexpr double kMaxWindowS = 7 * 24 * 3600;
  const double window = request.window_s.value_or(kDefaultWindowS);
  if (!(window >= 0 && window <= kMaxWindowS)) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "window_s must be between 0 and " + std::to_string(kMaxWindowS));
  }
  m.reply(convert::snapshot_to_wire(live_snapshot(m.daemon.engine, m.daemon.policy, window)));
}

}  // namespace sched::daemon::handlers
