// `sched hold`, `sched release`, `sched requeue` (scontrol's verbs): one
// request per job; a job that cannot be changed is reported and the others
// still are (exit 1 when any failed).
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "connection.hpp"
#include "program_name.hpp"

namespace sched::cli {
namespace {

// "12 13,14" → 12, 13, 14 (as scontrol takes lists).
std::vector<std::int64_t> job_ids(const std::vector<std::string>& words) {
  std::vector<std::int64_t> ids;
  for (const std::string& word : words) {
    std::stringstream in(word);
    std::string item;
    while (std::getline(in, item, ',')) {
      if (item.empty()) continue;
      std::size_t used = 0;
      long long id = 0;
      try {
        id = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || id <= 0)
        throw std::runtime_error("'" + item + "' is not a job id");
      ids.push_back(id);
    }
  }
  return ids;
}

void add_verb(CLI::App& app, const std::string& name, std::string_view type,
              const std::string& help) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("jobs", *words, "Job ids")->required();
  cmd->callback([words, type] {
    run_command([&] {
      int failed = 0;
      for (std::int64_t id : job_ids(*words)) {
        try {
          client().call<proto::Empty>(type, proto::JobRef{id});
        } catch (const proto::ProtoError& e) {
          std::cerr << program_name() << ": job " << id << ": " << e.what() << "\n";
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
