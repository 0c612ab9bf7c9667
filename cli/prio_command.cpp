// `sched prio`: pending jobs' priorities and weighted factors, like sprio
// (issue 18 item 5). A jobs.query of PENDING jobs: its replies carry each
// pending job's priority and factors and the configured weights.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "connection.hpp"
#include "job_commands.hpp"
#include "pages.hpp"
#include "prio_table.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::cli {
namespace {

struct PrioArgs {
  std::vector<std::string> ids;
  std::string user;
  bool weights = false;
};

std::vector<std::int64_t> prio_ids(const std::vector<std::string>& words) {
  std::vector<std::int64_t> ids;
  for (const std::string& word : words) {
    std::istringstream in(word);
    for (std::string item; std::getline(in, item, ',');) {
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

void prio(const PrioArgs& args) {
  proto::JobsQuery query;
  query.states = std::vector<std::string>{"PENDING"};
  if (!args.user.empty()) query.user = args.user;
  if (!args.ids.empty()) query.ids = prio_ids(args.ids);
  query.limit = 10000;
  std::vector<PrioRow> rows;
  PrioWeights weights;
  for_each_page<proto::JobList>(proto::type::kJobsQuery, query, [&](proto::JobList page) {
    if (page.weights) {
      weights = {page.weights->age, page.weights->fairshare, page.weights->jobsize,
                 page.weights->qos};
    }
    for (const proto::JobInfo& job : page.jobs) {
      PrioRow row;
      row.id = job.id;
      row.user = job.user;
      row.priority = job.priority.value_or(0);
      if (job.factors) {
        row.age = job.factors->age;
        row.fairshare = job.factors->fairshare;
        row.jobsize = job.factors->jobsize;
        row.qos = job.factors->qos;
      }
      row.nice = job.nice.value_or(0);
      rows.push_back(std::move(row));
    }
    return true;
  });
  // sprio -w alone shows the weights only; with -j or -u, the jobs under them.
  if (args.weights && args.ids.empty() && args.user.empty()) {
    std::cout << render_prio_weights(weights);
    return;
  }
  std::cout << render_prio(rows, args.weights ? &weights : nullptr);
}

}  // namespace

void add_prio_command(CLI::App& app) {
  auto args = std::make_shared<PrioArgs>();
  CLI::App* cmd = app.add_subcommand(
      "prio", "Pending jobs' priorities and their weighted factors (like sprio), queue order");
  cmd->add_option("-j,--jobs", args->ids, "Only these job ids (comma-separated)");
  cmd->add_option("-u,--user", args->user, "Only this user's jobs");
  cmd->add_flag("-w,--weights", args->weights, "Show the configured weights");
  cmd->callback([args] { run_command([&] { prio(*args); }); });
}

}  // namespace sched::cli
