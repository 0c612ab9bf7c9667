// `sched hold`, `sched release`, `sched requeue` (scontrol's verbs): one
// request per job; a job that cannot be changed is reported and the others
// still are (exit 1 when any failed).
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

}  // namespace

void add_job_control_commands(CLI::App& app) {
  add_verb(app, "hold", proto::type::kJobHold,
           "Hold pending jobs: they wait until released (like scontrol hold)");
  add_verb(app, "release", proto::type::kJobRelease,
           "Release held jobs (like scontrol release; an admin's hold only by an admin)");
  add_verb(app, "requeue", proto::type::kJobRequeue,
           "Kill running jobs and queue them again (like scontrol requeue)");
}

}  // namespace sched::cli
