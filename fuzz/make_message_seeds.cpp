// Writes the message target's starting corpus: real requests and replies of
// each peer, encoded by the protocol's own encoders, one file each, after the
// byte that makes the target read the body as that message's type (message_bodies.hpp;
// any byte is valid, these are the useful ones).
// Run at build time, so the seeds follow the protocol as it changes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "message_bodies.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/messages.hpp"

namespace fs = std::filesystem;
using namespace sched::proto;
namespace fuzz = sched::fuzz;

namespace {

void write(const fs::path& dir, const std::string& name, char body_index,
           const std::string& bytes) {
  std::ofstream(dir / name, std::ios::binary) << body_index << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);

  SubmitRequest submit;
  submit.job.name = "seed";
  submit.job.user = "alice";
  submit.job.script = "#!/bin/sh\necho hi\n";
  submit.job.nodes = 2;
  submit.job.env = {{"OMP_NUM_THREADS", "4"}};
  submit.request_id = "r-1";
  write(dir, "submit", fuzz::body_index<SubmitRequest>(), encode_request(type::kSubmit, 1, submit));

  JobsQuery query;
  query.limit = 100;
  query.states = std::vector<std::string>{"PENDING", "RUNNING"};
  query.cursor = "r12";
  write(dir, "jobs_query", fuzz::body_index<JobsQuery>(),
        encode_request(type::kJobsQuery, 2, query));

  AgentRegister reg;
  reg.node = "n1";
  reg.cores = 4;
  reg.jobs = {7, 8};
  write(dir, "agent_register", fuzz::body_index<AgentRegister>(),
        encode_request(type::kAgentRegister, 3, reg));

  TaskExited exited;
  exited.node = "n1";
  exited.job = 7;
  exited.status = 0;
  write(dir, "task_exited", fuzz::body_index<TaskExited>(),
        encode_request(type::kTaskExited, 4, exited));

  ProcPhase phase;
  phase.job = 7;
  phase.comm_s = 0.25;
  phase.compute_s = 1.5;
  write(dir, "proc_phase", fuzz::body_index<ProcPhase>(),
        encode_request(type::kProcPhase, 5, phase));

  write(dir, "error_reply", fuzz::body_index<SubmitRequest>(),
        encode_error(type::kSubmit, 1, "bad_field", "body.spec.nodes"));
  return 0;
}
