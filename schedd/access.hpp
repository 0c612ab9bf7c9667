// Who may do what (docs/security.md §4): every client request has a caller
// (its MUNGE credential's user). Users act on their own jobs; admins (root,
// schedd's own user and [auth] admins) on every job and on the cluster.
// A refusal is a permission_denied or limit error reply and an auth.denied
// event (docs/protocol.md §9.7).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "daemon_config.hpp"
#include "sched/auth/credential.hpp"
#include "sched/event.hpp"

namespace sched::daemon {

struct Message;

class Access {
 public:
  // `denied` publishes an auth.denied event (schedd's, rate-limited).
  Access(const DaemonConfig& config, std::function<void(Event)> denied);

  bool is_admin(const auth::Caller& caller) const;
  // Admins and the users of [urgent] users (issue 17 item 3).
  bool may_submit_urgent(const auth::Caller& caller) const;

  // Publishes auth.denied about `m` (through `denied`) and throws
  // ProtoError(code, message).
  [[noreturn]] void deny(const Message& m, std::string_view code, const std::string& message,
                         std::int64_t job = 0);

  // The per-user submission limits ([limits]): throws (through deny) when
  // `user`, who has `pending` jobs waiting, may not submit `adding` more now
  // (an array adds one job per task, as Slurm's MaxSubmitJobs counts them).
  // A submission that passes takes a token of the user's bucket.
  void admit_submission(const Message& m, const std::string& user, double now, std::size_t pending,
                        std::size_t adding = 1);

 private:
  struct Bucket {
    double tokens = 0;
    double at = 0;
  };
  const DaemonConfig& config_;
  std::function<void(Event)> denied_;
  uid_t schedd_uid_;
  std::map<std::string, Bucket, std::less<>> buckets_;
};

// The caller of a client message (never null on the client socket).
const auth::Caller& caller_of(const Message& m);
bool caller_is_admin(const Message& m);
// Refuses (permission_denied) unless the caller is an admin; `what` names
// the verb: "reloading the policy".
void require_admin(const Message& m, std::string_view what);
// Refuses (permission_denied) an urgent job from a caller who may not
// submit one (Access::may_submit_urgent).
void require_urgent(const Message& m);
// Refuses unless the caller owns the job (`owner`) or is an admin:
// "permission denied: job 12 belongs to alice".
void require_owner(const Message& m, std::int64_t job, const std::string& owner);
// Whether the caller may see the details of a job of `owner`.
bool may_see(const Message& m, const std::string& owner);

}  // namespace sched::daemon
