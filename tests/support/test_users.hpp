// Real users for tests of jobs that run as their user: created with
// `useradd -M` when missing (the test suite runs as root in CI), so that a
// second run finds them there. Without root, tests that need them skip and
// say so.
#pragma once

#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sched::testing {

struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user, created if missing and possible; nullopt when it does not exist
// and cannot be created (not root, or no useradd).
inline std::optional<TestUser> ensure_user(const std::string& name) {
  const auto find = [&]() -> std::optional<TestUser> {
    if (const passwd* pw = ::getpwnam(name.c_str())) return TestUser{name, pw->pw_uid, pw->pw_gid};
    return std::nullopt;
  };
  if (auto user = find()) return user;
  if (::geteuid() != 0) return std::nullopt;
  // -M: no home directory is made; -U: a group of the same name.
  const std::string command = "useradd -M -U -s /bin/sh " + name + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) return find();  // another test may have raced us
  return find();
}

// A fresh directory `user` owns (a job's working directory, her files);
// removed with everything in it, by root, at the end of the test.
class UserDir {
 public:
  explicit UserDir(const TestUser& user) {
    std::string name = (std::filesystem::temp_directory_path() / "sched-user-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = name;
    if (::chown(path_.c_str(), user.uid, user.gid) != 0) throw std::runtime_error("chown failed");
  }
  ~UserDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  UserDir(const UserDir&) = delete;
  UserDir& operator=(const UserDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sched::testing
