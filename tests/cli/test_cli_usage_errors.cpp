// Usage errors of the built `sched` command (issue 18 item 6): status 1 and
// exactly one "sched: ..." line on stderr, whatever part of the command line
// is wrong, and nothing on stdout. No daemon is needed: each fails before
// connecting.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "test_paths.hpp"

namespace {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `sched ARGS` (words already quoted for sh), stdin from /dev/null.
Outcome run_sched(const std::string& args) {
  char err_path[] = "/tmp/sched-cli-err-XXXXXX";
  const int fd = ::mkstemp(err_path);
  if (fd >= 0) ::close(fd);
  const std::string command = std::string("'") + SCHED_CLI_BIN + "' --endpoint tcp://127.0.0.1:9 " +
                              args + " </dev/null 2>" + err_path;
  Outcome outcome;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.out.append(buffer, n);
  const int status = ::pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* err = std::fopen(err_path, "r")) {
    while ((n = std::fread(buffer, 1, sizeof buffer, err)) > 0) outcome.err.append(buffer, n);
    std::fclose(err);
  }
  std::remove(err_path);
  return outcome;
}

int lines(const std::string& text) {
  int count = 0;
  for (char c : text) count += c == '\n';
  return count;
}

TEST(CliUsageErrors, ExitOneWithOneSchedLine) {
  for (const char* args : {
           "queue --frobnicate",  // unknown option (CLI11: 109)
           "frobnicate",          // unknown subcommand
           "",                    // no subcommand (106)
           "acct --limit",        // a missing value
           "acct --limit -3",     // a failed check (105)
           "show",                // a required argument
           "show abc",            // not a job id: our own check
           "show 12abc",
           "queue --format '%Q'",  // an unknown format letter
           "submit --nodes four --wrap true",
           "submit </dev/null",  // no script at all
       }) {
    const Outcome outcome = run_sched(args);
    EXPECT_EQ(outcome.status, 1) << args << "\n" << outcome.err;
    EXPECT_EQ(lines(outcome.err), 1) << args << "\n" << outcome.err;
    EXPECT_EQ(outcome.err.rfind("sched: ", 0), 0u) << args << "\n" << outcome.err;
    EXPECT_EQ(outcome.out, "") << args;
  }
}

TEST(CliUsageErrors, ABadJobIdIsNamedNotARange) {
  const Outcome outcome = run_sched("show abc");
  EXPECT_EQ(outcome.err, "sched: 'abc' is not a job id\n");
}

TEST(CliUsageErrors, HelpAndVersionStillSucceed) {
  EXPECT_EQ(run_sched("--help").status, 0);
  EXPECT_EQ(run_sched("--version").status, 0);
  EXPECT_EQ(run_sched("queue --help").status, 0);
}

}  // namespace
