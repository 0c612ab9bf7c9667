// Commands and code run as the real users of tests/support/test_users.hpp
// (ensure_user), so that their MUNGE credentials carry their uid
// (docs/security.md).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "sched/proto/transport.hpp"
#include "test_users.hpp"

namespace sched::testing {

// Runs `body` in a child process that has become `user` (gid, no
// supplementary groups, uid) and returns what it returned; an exception in
// it comes back as "exception: <what>".
std::string as_user(const TestUser& user, const std::function<std::string()>& body);

// The argv that runs `argv` as `user` in / (setpriv, keeping the environment).
std::vector<std::string> command_as(const TestUser& user, std::vector<std::string> argv);

// A folder of `cluster` every test user may work in (their jobs' working
// folder), with the path up to it reachable by them.
std::string shared_workdir(const LocalCluster& cluster);

// What schedd answers `user` for a request made by `call` on a connection
// of that user's own (in a child process that has become the user); a
// refusal comes back as "<code>: <message>".
std::string answer_as(const TestUser& user, const LocalCluster& cluster,
                      const std::function<std::string(proto::Client&)>& call);

}  // namespace sched::testing
