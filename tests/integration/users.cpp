#include "users.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <zmq.hpp>

#include "munge_support.hpp"
#include "sched/auth/credential.hpp"

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

std::string shared_workdir(const LocalCluster& cluster) {
  const std::string dir = cluster.work_dir() + "/shared";
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 01777);
  for (std::filesystem::path p = dir; p.has_parent_path() && p != p.parent_path();
       p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && p.string().rfind("/tmp/", 0) == 0) {
      ::chmod(p.c_str(), (st.st_mode & 07777) | S_IXOTH);
    }
  }
  return dir;
}

std::string answer_as(const TestUser& user, const LocalCluster& cluster,
                      const std::function<std::string(proto::Client&)>& call) {
  const std::string endpoint = cluster.client_endpoint();
  return as_user(user, [&] {
    zmq::context_t context(1);
    proto::Client client(context, endpoint, std::chrono::seconds(5),
                         auth::munge_signer(TestMunged::socket()));
    try {
      return call(client);
    } catch (const proto::ProtoError& e) {
      return e.code() + ": " + e.what();
    }
  });
}

}  // namespace sched::testing
