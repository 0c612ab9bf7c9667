// The live system as a twin starts from it (issue 22 item 3, `sched policy
// try`): schedd's policy.snapshot fills it from its engine, convert/ carries
// it over the wire, sim/twin.hpp runs it forward. Plain data, in engine types
// so that schedd and the simulator share it without depending on each other.
// Times are on the engine's clock (schedd: UNIX epoch seconds).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sched/job.hpp"

namespace sched {

struct LiveSnapshot {
  double now = 0;  // when it was taken

  struct Node {
    std::string name;
    int cores = 1;
    int gpus = 0;
    bool up = true;
    bool draining = false;
  };
  std::vector<Node> nodes;  // in the engine's order

  // A job that holds nodes (STARTING, RUNNING, ADAPTING, COMPLETING): its
  // spec, submit and start time, limit extension and MTCT as the engine has
  // them, and its nodes by name, leader first.
  struct Held {
    Job job;
    std::vector<std::string> nodes;
  };
  std::vector<Held> running;  // in start order
  std::vector<Job> pending;   // in the queue's order (priority, then submit)

  // Every job submitted in the window before `now` (whatever became of it),
  // by submit time: the recent arrival pattern the twin replays forward.
  struct Arrival {
    JobId id = 0;
    double time = 0;
    JobSpec spec;
  };
  double arrival_window_s = 0;
  std::vector<Arrival> arrivals;

  double corridor_lower_w = 0;
  double corridor_upper_w = 0;

  // The running policy: its name, where schedd loaded it from, its params
  // (as param_text writes them) and its files' text, the policy file first
  // then its lib modules ("lib/easy.lua"), so that a twin loads the very
  // same code without schedd's policy folder.
  struct PolicyFile {
    std::string name;
    std::string text;
  };
  std::string policy_name;
  std::string policy_path;
  std::vector<std::pair<std::string, std::string>> policy_params;
  std::vector<PolicyFile> policy_files;
};

}  // namespace sched
