// The munged the tests get credentials from: $SCHED_TEST_MUNGE_SOCKET when
// set, else a system munged at libmunge's default socket when one answers
// (CI may run one), else a private munged started once per test binary in a
// folder of /tmp that every user can reach (the tests run commands as other
// users), stopped when the binary exits.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "sched/auth/munge.hpp"
#include "sched/auth/private_munged.hpp"

namespace sched::testing {

class TestMunged {
 public:
  static const std::string& socket() {
    static TestMunged munged;
    return munged.socket_;
  }
  ~TestMunged() {
    if (dir_.empty()) return;
    auth::stop_private_munged(dir_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  TestMunged() {
    if (const char* given = std::getenv("SCHED_TEST_MUNGE_SOCKET"); given && *given) {
      socket_ = given;
      return;
    }
    if (auth::munge_answers()) return;  // the system's, at the default socket
    std::string pattern = "/tmp/sched-munge-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    socket_ = auth::start_private_munged(dir_);
  }
  std::string dir_;
  std::string socket_;  // empty: libmunge's default
};

}  // namespace sched::testing
