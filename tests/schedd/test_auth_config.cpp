// The [auth] and [limits] keys of schedd's config (docs/admin.md): read,
// checked, and off or default when absent.
#include <gtest/gtest.h>

#include "daemon_config.hpp"
#include "lua_test_support.hpp"

namespace sched::daemon {
namespace {

std::string error_of(luatest::TempDir& dir, const std::string& text) {
  try {
    load_config(dir.write("bad.toml", text));
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    return what.substr(what.find(": ") + 2);  // without the file's path
  }
  return "no error";
}

TEST(AuthConfig, DefaultsAreMungesOwnSocketNoExtraAdminsAndNoLimits) {
  const DaemonConfig c;
  EXPECT_EQ(c.auth_type, "munge");
  EXPECT_EQ(c.munge_socket, "");
  EXPECT_TRUE(c.admins.empty());
  EXPECT_EQ(c.session_ttl_s, 600);
  EXPECT_EQ(c.max_pending_jobs_per_user, 0);
  EXPECT_EQ(c.submissions_per_second_per_user, 0);
  EXPECT_EQ(c.submission_burst_per_user, 0);
}

TEST(AuthConfig, TheKeysAreRead) {
  luatest::TempDir dir;
  const DaemonConfig c = load_config(dir.write(
      "ok.toml",
      "[auth]\ntype = \"munge\"\nsocket = \"/run/site/munge.socket\"\nadmins = [\"alice\", "
      "\"ops\"]\nsession_ttl_s = 30\n[limits]\nmax_pending_jobs_per_user = "
      "100\nsubmissions_per_second_per_user = "
      "2.5\nsubmission_burst_per_user = 10\n"));
  EXPECT_EQ(c.munge_socket, "/run/site/munge.socket");
  EXPECT_EQ(c.admins, (std::vector<std::string>{"alice", "ops"}));
  EXPECT_EQ(c.session_ttl_s, 30);
  EXPECT_EQ(c.max_pending_jobs_per_user, 100);
  EXPECT_EQ(c.submissions_per_second_per_user, 2.5);
  EXPECT_EQ(c.submission_burst_per_user, 10);
}

TEST(AuthConfig, BadValuesAreErrorsNamingTheKey) {
  luatest::TempDir dir;
  EXPECT_EQ(error_of(dir, "[auth]\ntype = \"none\"\n"), "auth.type: expected \"munge\"");
  EXPECT_EQ(error_of(dir, "[auth]\nadmins = \"alice\"\n"),
            "auth.admins: expected an array of user names");
  EXPECT_EQ(error_of(dir, "[auth]\nadmins = [\"alice\", 3]\n"),
            "auth.admins: expected an array of user names");
  EXPECT_EQ(error_of(dir, "[auth]\nkey = \"x\"\n"), "auth.key: unknown key");
  EXPECT_EQ(error_of(dir, "[auth]\nsession_ttl_s = 0\n"),
            "auth.session_ttl_s: must be at least 1.000000");
  EXPECT_EQ(error_of(dir, "[limits]\nmax_pending_jobs_per_user = -1\n"),
            "limits.max_pending_jobs_per_user: expected an integer from 0 to 1000000");
  EXPECT_EQ(error_of(dir, "[limits]\nsubmissions_per_second_per_user = -2\n"),
            "limits.submissions_per_second_per_user: must be at least 0.000000");
}

}  // namespace
}  // namespace sched::daemon
