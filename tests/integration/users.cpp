#include "users.hpp"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace sched::testing {

std::string as_user(const TestUser& user, const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    std::string result;
    if (setgroups(0, nullptr) != 0 || setgid(user.gid) != 0 || setuid(user.uid) != 0) {
      result = "exception: cannot become " + user.name;
    } else {
      try {
        result = body();
      } catch (const std::exception& e) {
        result = std::string("exception: ") + e.what();
      }
    }
    std::size_t written = 0;
    while (written < result.size()) {
      const ssize_t n = ::write(fds[1], result.data() + written, result.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

std::vector<std::string> command_as(const TestUser& user, std::vector<std::string> argv) {
  // From /: the test's own folder may be closed to the user.
  std::vector<std::string> out = {"/usr/bin/setpriv",
                                  "--reuid=" + std::to_string(user.uid),
                                  "--regid=" + std::to_string(user.gid),
                                  "--clear-groups",
                                  "--",
                                  "/usr/bin/env",
                                  "-C",
                                  "/"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace sched::testing
