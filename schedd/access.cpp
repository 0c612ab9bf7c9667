#include "access.hpp"

#include <unistd.h>

#include <algorithm>

#include "handlers/context.hpp"
#include "sched/proto/text.hpp"

namespace sched::daemon {

Access::Access(const DaemonConfig& config, std::function<void(Event)> denied)
    : config_(config), denied_(std::move(denied)), schedd_uid_(::geteuid()) {}

bool Access::is_admin(const auth::Caller& caller) const {
  // schedd's own user runs the cluster already (the developer of a local
  // cluster, or the service account of a site's).
  if (caller.uid == 0 || caller.uid == schedd_uid_) return true;
  return std::find(config_.admins.begin(), config_.admins.end(), caller.user) !=
         config_.admins.end();
}

bool Access::may_submit_urgent(const auth::Caller& caller) const {
  return is_admin(caller) || std::find(config_.urgent_users.begin(), config_.urgent_users.end(),
                                       caller.user) != config_.urgent_users.end();
}

void Access::deny(const Message& m, std::string_view code, const std::string& message,
                  std::int64_t job) {
  Event event;
  event.job = job;
  event.user = caller_of(m).user;
  event.reason = proto::excerpt(m.envelope.type);
  event.code = std::string(code);
  event.message = message;
  denied_(std::move(event));
  throw proto::ProtoError(code, message);
}

void Access::admit_submission(const Message& m, const std::string& user, double now,
                              std::size_t pending, std::size_t adding) {
  const int max_pending = config_.max_pending_jobs_per_user;
  if (max_pending > 0 && pending + adding > static_cast<std::size_t>(max_pending)) {
    deny(m, proto::code::kLimit,
         "limit: " + user + " has " + std::to_string(pending) + " pending jobs" +
             (adding > 1 ? " and the array adds " + std::to_string(adding) : std::string()) +
             " (limits.max_pending_jobs_per_user = " + std::to_string(max_pending) + ")");
  }
  const double rate = config_.submissions_per_second_per_user;
  if (rate <= 0) return;
  const double burst = config_.submission_burst_per_user > 0 ? config_.submission_burst_per_user
                                                             : std::max(1.0, rate);
  auto it = buckets_.find(user);
  if (it == buckets_.end()) it = buckets_.emplace(user, Bucket{burst, now}).first;
  Bucket& bucket = it->second;
  bucket.tokens = std::min(burst, bucket.tokens + (now - bucket.at) * rate);
  bucket.at = now;
  if (bucket.tokens < 1) {
    deny(m, proto::code::kLimit,
         "limit: " + user + " submits faster than limits.submissions_per_second_per_user = " +
             proto::excerpt(std::to_string(rate)) + "; try again in a moment");
  }
  bucket.tokens -= 1;
}

const auth::Caller& caller_of(const Message& m) {
  if (!m.caller) throw std::logic_error("a client check on a message with no caller");
  return *m.caller;
}

bool caller_is_admin(const Message& m) { return m.daemon.access.is_admin(caller_of(m)); }

void require_admin(const Message& m, std::string_view what) {
  if (caller_is_admin(m)) return;
  m.daemon.access.deny(m, proto::code::kPermissionDenied,
                       "permission denied: " + std::string(what) + " is for administrators (" +
                           caller_of(m).user + " is not one)");
}

void require_urgent(const Message& m) {
  if (m.daemon.access.may_submit_urgent(caller_of(m))) return;
  if (m.daemon.config.urgent_users.empty()) require_admin(m, "urgent priority");
  m.daemon.access.deny(m, proto::code::kPermissionDenied,
                       "permission denied: urgent priority is for administrators and the users "
                       "of [urgent] users (" +
                           caller_of(m).user + " is neither)");
}

void require_owner(const Message& m, std::int64_t job, const std::string& owner) {
  if (may_see(m, owner)) return;
  m.daemon.access.deny(m, proto::code::kPermissionDenied,
                       "permission denied: job " + std::to_string(job) + " belongs to " + owner,
                       job);
}

bool may_see(const Message& m, const std::string& owner) {
  return caller_of(m).user == owner || caller_is_admin(m);
}

}  // namespace sched::daemon
