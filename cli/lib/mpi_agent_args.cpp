#include "mpi_agent_args.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace sched::cli {
namespace {

constexpr std::array<std::string_view, 5> kFlags = {"-x", "-q", "-T", "-t", "-n"};
constexpr std::array<std::string_view, 3> kWithValue = {"-l", "-p", "-o"};

bool one_of(const auto& set, const std::string& word) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

}  // namespace

MpiAgentCall parse_mpi_agent_args(const std::vector<std::string>& args) {
  std::size_t i = 0;
  while (i < args.size() && args[i].starts_with("-")) {
    if (one_of(kFlags, args[i])) {
      ++i;
    } else if (one_of(kWithValue, args[i])) {
      if (i + 1 >= args.size()) throw std::invalid_argument("option " + args[i] + " has no value");
      i += 2;
    } else {
      throw std::invalid_argument("unknown option " + args[i] +
                                  " (usage: sched-mpi-agent [-x] HOST COMMAND...)");
    }
  }
  if (i >= args.size() || args[i].empty()) {
    throw std::invalid_argument("no host given (usage: sched-mpi-agent [-x] HOST COMMAND...)");
  }
  MpiAgentCall call;
  call.host = args[i++];
  for (std::size_t first = i; i < args.size(); ++i) {
    if (i > first) call.command += ' ';
    call.command += args[i];
  }
  if (call.command.find_first_not_of(" \t") == std::string::npos) {
    throw std::invalid_argument("no command to run on " + call.host +
                                " (an interactive shell is not offered)");
  }
  return call;
}

std::vector<std::string> mpi_agent_run_args(const MpiAgentCall& call) {
  return {"run", "-w",         call.host,         "-N",      "1",  "-n",
          "1",   "--mpi=none", "--cpu-bind=none", "/bin/sh", "-c", call.command};
}

}  // namespace sched::cli
