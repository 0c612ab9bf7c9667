// Commands and code run as the real users of tests/support/test_users.hpp
// (ensure_user), so that their MUNGE credentials carry their uid
// (docs/security.md).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "test_users.hpp"

namespace sched::testing {

// Runs `body` in a child process that has become `user` (gid, no
// supplementary groups, uid) and returns what it returned; an exception in
// it comes back as "exception: <what>".
std::string as_user(const TestUser& user, const std::function<std::string()>& body);

// The argv that runs `argv` as `user` in / (setpriv, keeping the environment).
std::vector<std::string> command_as(const TestUser& user, std::vector<std::string> argv);

}  // namespace sched::testing
