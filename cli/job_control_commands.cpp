// `sched hold`, `sched release`, `sched requeue` (scontrol's verbs): one
// request per job; a job that cannot be changed is reported and the others
// still are (exit 1 when any failed). `sched resize JOB --nodes N` (issue 17
// item 1): the owner or an admin asks for an evolving job.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "connection.hpp"
#include "job_ids.hpp"
#include "program_name.hpp"

namespace sched::cli {
namespace {

// "12 13,14 15_2": jobs 12, 13, 14 and task 2 of array 15 (as scontrol takes lists).
void add_verb(CLI::App& app, const std::string& name, std::string_view type,
              const std::string& help) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("jobs", *words, "Job ids")->required();
  cmd->callback([words, type] {
    run_command([&] {
      int failed = 0;
      for (const JobIdRef& ref : parse_job_refs(*words)) {
        try {
          proto::JobTaskRef request;
          request.id = ref.id;
          request.array_task_id = ref.task;
          client().call<proto::Empty>(type, request);
        } catch (const proto::ProtoError& e) {
          std::cerr << program_name() << ": job " << ref.text() << ": " << e.what() << "\n";
          ++failed;
        }
      }
      if (failed > 0) std::exit(1);
    });
  });
}

struct ResizeArgs {
  std::int64_t job = 0;
  int nodes = 0;
  double timeout_s = 0;
  std::string reason;
};

// What the answer says, for people: "job 12: resize to 4 nodes requested
// (request 3), pending".
std::string resize_text(const ResizeArgs& args, const proto::ResizeAnswer& answer) {
  std::ostringstream text;
  text << "job " << args.job << ": resize to " << args.nodes << " nodes requested (request "
       << answer.request << "), " << answer.state;
  if (answer.state == "pending") text << ": the policy grows or shrinks the job when it can";
  return text.str();
}

void add_resize_command(CLI::App& app) {
  auto args = std::make_shared<ResizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "resize", "Ask for an evolving job to grow or shrink to N nodes (the owner or an admin)");
  cmd->add_option("job", args->job, "Job id")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--nodes,-N", args->nodes, "The size asked for")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout", args->timeout_s,
                  "Seconds after which a request not yet granted is dropped (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--reason", args->reason, "Why, for the events");
  cmd->callback([args] {
    run_command([&] {
      proto::JobResize request;
      request.id = args->job;
      request.nodes = args->nodes;
      request.timeout_s = args->timeout_s;
      request.reason = args->reason;
      try {
        const auto answer = client().call<proto::ResizeAnswer>(proto::type::kJobResize, request);
        std::cout << resize_text(*args, answer) << "\n";
      } catch (const proto::ProtoError& e) {
        std::cerr << program_name() << ": job " << args->job << ": " << e.what() << "\n";
        std::exit(1);
      }
    });
  });
}

}  // namespace

void add_job_control_commands(CLI::App& app) {
  add_resize_command(app);
  add_verb(app, "hold", proto::type::kJobHold,
           "Hold pending jobs: they wait until released (like scontrol hold)");
  add_verb(app, "release", proto::type::kJobRelease,
           "Release held jobs (like scontrol release; an admin's hold only by an admin)");
  add_verb(app, "requeue", proto::type::kJobRequeue,
           "Kill running jobs and queue them again (like scontrol requeue)");
}

}  // namespace sched::cli
