// Real users for the tests of who may do what (docs/security.md): created
// for the test when missing (useradd, as root; CI runs the tests as root),
// and commands or code run as them, so that their MUNGE credentials carry
// their uid.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sched::testing {

struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user `name` (created with no home when missing); nothing when this
// process cannot create or become users (not root): the caller skips.
std::optional<TestUser> test_user(const std::string& name);

// Runs `body` in a child process that has become `user` (gid, no
// supplementary groups, uid) and returns what it returned; an exception in
// it comes back as "exception: <what>".
std::string as_user(const TestUser& user, const std::function<std::string()>& body);

// The argv that runs `argv` as `user` in / (setpriv, keeping the environment).
std::vector<std::string> command_as(const TestUser& user, std::vector<std::string> argv);

}  // namespace sched::testing
