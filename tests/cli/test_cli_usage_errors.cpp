// Usage errors of the built `sched` command (issue 18 item 6): status 1 and
// exactly one "sched: ..." line on stderr, whatever part of the command line
// is wrong, and nothing on stdout. No daemon is needed: each fails before
// connecting.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

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

// The command builds only the subcommands its arguments name
// (cli/commands.cpp): each one the top-level help lists must be found by its
// name, and give its own help.
TEST(CliUsageErrors, EverySubcommandTheHelpListsIsReachable) {
  const Outcome help = run_sched("--help");
  const auto at = help.out.find("Subcommands:\n");
  ASSERT_NE(at, std::string::npos) << help.out;
  std::istringstream listing(help.out.substr(at));
  std::string line;
  std::vector<std::string> names;
  while (std::getline(listing, line)) {
    // "  NAME   description"
    if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  EXPECT_GE(names.size(), 20u);
  EXPECT_NE(std::find(names.begin(), names.end(), "sim"), names.end());
  for (const std::string& name : names) {
    const Outcome outcome = run_sched(name + " --help");
    EXPECT_EQ(outcome.status, 0) << name << "\n" << outcome.err;
    EXPECT_NE(outcome.out.find(" " + name + " [OPTIONS]"), std::string::npos) << name << "\n"
                                                                              << outcome.out;
  }
}

}  // namespace
