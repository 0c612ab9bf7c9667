// `sched queue`, `sched show`, `sched cancel`.
#include "job_commands.hpp"

#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "job_ids.hpp"
#include "json_list.hpp"
#include "listings.hpp"
#include "nodelist.hpp"
#include "pages.hpp"
#include "program_name.hpp"
#include "queue_format.hpp"
#include "sched/job_array.hpp"
#include "slurm_time.hpp"
#include "state_codes.hpp"

namespace sched::cli {
namespace {

// "s1:0-3;s2:4,6" (issue 20 item 2): a job's core ids per node, runs
// compressed; "(null)" before it holds any.
std::string cores_text(const std::optional<std::map<std::string, std::vector<int>>>& ids) {
  if (!ids || ids->empty()) return "(null)";
  std::string text;
  for (const auto& [node, cores] : *ids) {
    if (!text.empty()) text += ";";
    text += node + ":";
    for (std::size_t i = 0; i < cores.size();) {
      std::size_t j = i;
      while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
      if (i > 0) text += ",";
      text += std::to_string(cores[i]);
      if (j > i) text += "-" + std::to_string(cores[j]);
      i = j + 1;
    }
  }
  return text;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<std::int64_t> parse_ids(const std::vector<std::string>& words) {
  std::vector<std::int64_t> ids;
  for (const std::string& word : words) {
    for (const std::string& item : split_list(word)) {
      std::size_t used = 0;
      long long id = 0;
      try {
        id = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || id <= 0) {
        throw std::runtime_error("'" + item + "' is not a job id");
      }
      ids.push_back(id);
    }
  }
  return ids;
}

// -t's comma-separated states (PD, R, ... or names) as schedd names them.
std::vector<std::string> state_names(const std::string& list) {
  std::vector<std::string> names;
  for (const std::string& item : split_list(list)) {
    const auto state = parse_state_filter(item);
    if (!state) throw std::runtime_error("unknown job state '" + item + "'");
    names.emplace_back(to_string(*state));
  }
  return names;
}

JobState state_of(const std::string& name) {
  return parse_job_state(name).value_or(JobState::Pending);
}

// As many as schedd gives in one page (it bounds pages by bytes too).
constexpr std::int64_t kQueuePageJobs = 10000;

// What the table shows of a job: a page read into these alone skips the
// rest of JobInfo's fields (unknown fields are ignored), a good part of what
// `sched queue` spends on a long queue.
struct QueueJob {
  std::int64_t id = 0;
  std::string name;
  std::string user;
  std::string state;
  int nodes = 0;
  double walltime = 0;
  double submit_time = 0;
  std::optional<double> start_time;
  std::optional<double> end_time;
  std::optional<double> est_end;
  std::optional<double> expected_start;
  std::vector<std::string> nodelist;
  std::string reason;
  // ---- job arrays (issue 18 item 1)
  std::optional<std::int64_t> array_job_id;
  std::optional<int> array_task_id;
  std::optional<std::string> array;
  std::optional<std::string> partition;  // issue 20 item 1
  template <class V>
  void fields(V& v) {
    v("partition", partition);
    v("id", id);
    // ---- job arrays (issue 18 item 1)
    v("array_job_id", array_job_id);
    v("array_task_id", array_task_id);
    v("array", array);
    v("name", name);
    v("user", user);
    v("state", state);
    v("nodes", nodes);
    v("walltime", walltime);
    v("submit_time", submit_time);
    v("start_time", start_time);
    v("end_time", end_time);
    v("est_end", est_end);
    v("expected_start", expected_start);
    v("nodelist", nodelist);
    v("reason", reason);
  }
};

struct QueuePage {  // a jobs.query reply (proto::JobList) read as QueueJobs
  std::vector<QueueJob> jobs;
  std::optional<std::string> next_cursor;
  template <class V>
  void fields(V& v) {
    v("jobs", jobs);
    v("next_cursor", next_cursor);
  }
};

struct QueueArgs {
  std::string user;
  std::string states;
  std::vector<std::string> ids;
  bool start = false;
  bool json = false;
  std::string format;  // -o/--format: squeue's letters (queue_format.hpp)
  bool noheader = false;
  bool expand_arrays = false;  // -r/--array: one line per array task (squeue -r)
  std::string partition;       // -p/--partition: only this partition's jobs (issue 20)
};

void queue(const QueueArgs& args) {
  proto::JobsQuery query;
  if (!args.user.empty()) query.user = args.user;
  if (!args.states.empty()) query.states = state_names(args.states);
  if (!args.ids.empty()) query.ids = parse_ids(args.ids);
  query.limit = kQueuePageJobs;
  // Each page as it arrives: JSON goes out at once, table rows wait only for
  // the column widths (the pages themselves are not kept).
  if (args.json) {
    JsonList out(std::cout, "jobs");
    for_each_page<proto::JobList>(proto::type::kJobsQuery, query, [&](proto::JobList page) {
      for (const auto& job : page.jobs) {
        if (!args.partition.empty() && job.partition.value_or("") != args.partition) continue;
        out.add(to_json(job));
      }
      return true;
    });
    out.finish();
    return;
  }
  const double now = static_cast<double>(std::time(nullptr));
  std::vector<FormatField> format;
  if (!args.format.empty()) {
    try {
      format = parse_queue_format(args.format);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("--format: ") + e.what());
    }
    if (!args.noheader) std::cout << format_queue_header(format) << "\n";
  }
  // The PARTITION column where partitions are configured (issue 20 item 1).
  QueueTable table(args.start, format.empty() && partitions_configured());
  const auto emit = [&](const QueueRow& row) {
    // With a format each line goes out at once: its widths are fixed.
    if (!format.empty()) {
      std::cout << format_queue_row(format, row, now) << "\n";
    } else {
      table.add(row);
    }
  };
  // ---- job arrays (issue 18 item 1): the pending tasks of an array, next
  // to each other in the queue's order, go out as one line (squeue's way).
  std::optional<QueueRow> run;
  std::vector<int> run_indices;
  int run_throttle = 0;
  std::int64_t run_array = 0;
  const auto flush = [&]() {
    if (!run) return;
    run->display_id = pending_array_name(run_array, run_indices, run_throttle);
    emit(*run);
    run.reset();
    run_indices.clear();
  };
  for_each_page<QueuePage>(proto::type::kJobsQuery, query, [&](QueuePage page) {
    for (auto& job : page.jobs) {
      if (!args.partition.empty() && job.partition.value_or("") != args.partition) continue;
      QueueRow row;
      row.id = job.id;
      row.partition = job.partition.value_or("");
      row.name = std::move(job.name);
      row.user = std::move(job.user);
      row.state = state_of(job.state);
      if (job.start_time) row.elapsed = job.end_time.value_or(now) - *job.start_time;
      row.limit = job.walltime;
      if (job.est_end && job.start_time) row.limit = *job.est_end - *job.start_time;
      row.nodes = job.nodes;
      row.nodelist = std::move(job.nodelist);
      row.reason = std::move(job.reason);
      row.expected_start = job.expected_start.value_or(-1);
      row.submit_time = job.submit_time;
      row.start_time = job.start_time.value_or(-1);
      row.end_time = job.end_time.value_or(-1);
      const bool task = job.array_job_id && job.array_task_id;
      if (task && row.state == JobState::Pending && !args.expand_arrays) {
        if (run && run_array == *job.array_job_id) {
          run_indices.push_back(*job.array_task_id);
          continue;
        }
        flush();
        run = std::move(row);
        run_array = *job.array_job_id;
        run_indices = {*job.array_task_id};
        auto parsed = parse_job_array(job.array.value_or(""), kMaxArraySizeCeiling);
        run_throttle = parsed.ok() ? parsed->throttle : 0;
        continue;
      }
      flush();
      if (task) row.display_id = array_task_name(*job.array_job_id, *job.array_task_id);
      emit(row);
    }
    return true;
  });
  flush();
  if (!format.empty()) return;
  std::string text = table.render();
  if (args.noheader) text.erase(0, text.find('\n') + 1);
  std::cout << text;
}

void show(const JobIdRef& ref, bool json) {
  proto::JobTaskRef request;
  request.id = ref.id;
  request.array_task_id = ref.task;
  const auto job = client().call<proto::JobReply>(proto::type::kJobShow, request).job;
  if (json) {
    std::cout << to_json(job).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  // scontrol's habit: Key=Value, a few per line.
  const auto time = [](const std::optional<double>& t) {
    return t ? format_timestamp(*t) : std::string("N/A");
  };
  std::cout << "JobId=" << job.id;
  // ---- job arrays (issue 18 item 1): scontrol's words for a task
  if (job.array_job_id && job.array_task_id) {
    std::cout << " ArrayJobId=" << *job.array_job_id << " ArrayTaskId=" << *job.array_task_id;
    if (auto parsed = parse_job_array(job.array.value_or(""), kMaxArraySizeCeiling);
        parsed.ok() && parsed->throttle > 0) {
      std::cout << " ArrayTaskThrottle=" << parsed->throttle;
    }
  }
  std::cout << " JobName=" << job.name << "\n"
            << "   UserId=" << job.user << " Kind=" << job.kind << "\n"
            << "   JobState=" << job.state
            << " Reason=" << (job.reason.empty() ? "None" : job.reason) << " ExitCode="
            << (job.exit_status ? format_exit_code(*job.exit_status) : std::string("N/A")) << "\n"
            << "   NumNodes=" << job.nodes << " ReqNodes=" << job.req_nodes
            << " MinNodes=" << job.min_nodes << " MaxNodes=" << job.max_nodes
            << " NodeConstraint=" << job.node_constraint << " NtasksPerNode=" << job.tasks_per_node
            << "\n"
            // ---- tasks (issue 16 item 1): -n (nodes × tasks per node when not given)
            << "   NumTasks=" << job.ntasks.value_or(job.req_nodes * job.tasks_per_node)
            << " CPUs/Task=" << job.cpus_per_task.value_or(1)
            << " Distribution=" << job.distribution.value_or("block")
            << " CpuBind=" << job.cpu_bind.value_or("none") << "\n"
            << "   TimeLimit=" << format_time_limit(job.walltime) << " Urgent=" << job.urgent
            << "\n"
            << "   SubmitTime=" << format_timestamp(job.submit_time)
            << " StartTime=" << time(job.start_time) << " EndTime=" << time(job.end_time)
            << " ExpectedStart=" << time(job.expected_start) << "\n"
            << "   NodeList="
            << (job.nodelist.empty() ? "(null)" : compress_sorted_nodelist(job.nodelist))
            << " BatchHost=" << (job.nodelist.empty() ? "(null)" : job.nodelist.front())
            << "\n"
            // ---- invasive partitions (issue 20 item 2): cores asked, and held per node
            << (job.cores ? "   NumCores=" + std::to_string(*job.cores) +
                                " Cores=" + cores_text(job.core_ids) + "\n"
                          : std::string())
            << "   Expansions=" << job.expansions << " Shrinks=" << job.shrinks
            << " Requeues=" << job.requeues;
  if (job.mtct) std::cout << " MTCT=" << *job.mtct;
  if (job.power_w) std::cout << " PowerW=" << *job.power_w;
  // ---- issue 17 item 7: the job's own power bounds (per node, as submitted)
  if (job.power_min_w) std::cout << " MinPowerW=" << *job.power_min_w;
  if (job.power_max_w) std::cout << " MaxPowerW=" << *job.power_max_w;
  // ---- issue 18 item 2
  std::cout << "\n   Dependency=" << job.dependency.value_or("(null)")
            << " BeginTime=" << time(job.begin_time);
  // ---- priority (issue 18 item 5)
  std::cout << "\n   Partition=" << job.partition.value_or("(null)")
            << " Account=" << job.account.value_or("(null)")
            << " QOS=" << job.qos.value_or("normal") << " Nice=" << job.nice.value_or(0);
  if (job.priority) std::cout << " Priority=" << *job.priority;
  // ---- issue 18 item 4
  const auto names = [](const std::optional<std::vector<std::string>>& list) {
    return list && !list->empty() ? compress_sorted_nodelist(*list) : std::string("(null)");
  };
  std::cout << "\n   ReqNodeList=" << names(job.req_nodelist)
            << " ExcNodeList=" << names(job.exc_nodelist) << " TresPerNode="
            << (job.gpus_per_node ? "gres/gpu:" + std::to_string(*job.gpus_per_node) : "(null)");
  std::cout << "\n   WorkDir=" << job.workdir << "\n   StdOut=" << job.output
            << "\n   StdErr=" << job.error.value_or(job.output) << "\n";
}

struct CancelArgs {
  std::vector<std::string> ids;
  std::string user;
  std::string name;
  std::string states;
};

// What to cancel: the ids given ("A" a whole array, "A_i" one task, as
// scancel has them), or with filters (scancel's -u, -n, -t) the not-ended
// jobs that match them all, among the plain ids given if any.
std::vector<JobIdRef> cancel_targets(const CancelArgs& args) {
  std::vector<JobIdRef> refs = parse_job_refs(args.ids);
  if (args.user.empty() && args.name.empty() && args.states.empty()) {
    if (refs.empty()) throw std::runtime_error("give job ids, or -u USER, -n NAME or -t STATES");
    return refs;
  }
  proto::JobsQuery query;
  if (!args.user.empty()) query.user = args.user;
  if (!args.states.empty()) query.states = state_names(args.states);
  if (!refs.empty()) {
    query.ids.emplace();
    for (const JobIdRef& ref : refs) {
      if (ref.task) {
        throw std::runtime_error("array tasks (" + ref.text() +
                                 ") and -u/-n/-t do not go together: give plain job ids");
      }
      query.ids->push_back(ref.id);
    }
  }
  query.limit = kQueuePageJobs;
  std::vector<JobIdRef> matching;
  for_each_page<QueuePage>(proto::type::kJobsQuery, query, [&](QueuePage page) {
    for (const auto& job : page.jobs) {
      if (args.name.empty() || job.name == args.name) matching.push_back({job.id, std::nullopt});
    }
    return true;
  });
  return matching;
}

void cancel_jobs(const CancelArgs& args) {
  int failed = 0;
  for (const JobIdRef& ref : cancel_targets(args)) {
    try {
      proto::JobTaskRef request;
      request.id = ref.id;
      request.array_task_id = ref.task;
      client().call<proto::Empty>(proto::type::kCancel, request);
    } catch (const proto::ProtoError& e) {
      std::cerr << program_name() << ": job " << ref.text() << ": " << e.what() << "\n";
      ++failed;
    }
  }
  if (failed > 0) std::exit(1);
}

}  // namespace

void add_queue_command(CLI::App& app) {
  auto q = std::make_shared<QueueArgs>();
  CLI::App* queue_cmd = app.add_subcommand("queue", "List pending and running jobs (like squeue)");
  queue_cmd->add_option("-u,--user", q->user, "Only this user's jobs");
  queue_cmd->add_option(
      "-t,--states", q->states,
      "States to list, comma-separated (PD,R,CD,... or names); default: not ended");
  queue_cmd->add_option("-j,--jobs", q->ids, "Only these job ids (comma-separated)");
  queue_cmd->add_flag("--start", q->start, "Show expected start times of pending jobs");
  queue_cmd->add_flag("--json", q->json, "Print JSON");
  queue_cmd->add_option("-o,--format", q->format,
                        "squeue's format: %i %j %u %t %T %M %l %L %D %N %R %P %V %S %e, "
                        "%[.|-][width]letter ('.' right-aligns), e.g. \"%.8i %-10j %t\"");
  // squeue's -h is --noheader; help stays --help.
  queue_cmd->set_help_flag("--help", "Print this help message and exit");
  queue_cmd->add_flag("-h,--noheader", q->noheader, "No header line");
  queue_cmd->add_flag("-r,--array", q->expand_arrays,
                      "One line per pending array task (default: one line per array)");
  queue_cmd->add_option("-p,--partition", q->partition, "Only this partition's jobs");
  queue_cmd->callback([q] { run_command([&] { queue(*q); }); });
}

void add_show_command(CLI::App& app) {
  // The id as text, parsed here: CLI11's number check words a bad id as a
  // floating-point range ("Value abc not in range 0 to 1.79769e+308").
  auto show_id = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show_cmd =
      app.add_subcommand("show", "Show one job in detail (like scontrol show job)");
  show_cmd->add_option("job", *show_id, "Job id")->required();
  show_cmd->add_flag("--json", *show_json, "Print JSON");
  show_cmd->callback([show_id, show_json] {
    run_command([&] {
      const std::vector<JobIdRef> ids = parse_job_refs({*show_id});
      if (ids.size() != 1) throw std::runtime_error("'" + *show_id + "' is not one job id");
      show(ids.front(), *show_json);
    });
  });
}

void add_cancel_command(CLI::App& app) {
  auto cancel = std::make_shared<CancelArgs>();
  CLI::App* cancel_cmd = app.add_subcommand(
      "cancel", "Cancel jobs (like scancel): by id, or every job matching -u/-n/-t");
  cancel_cmd->add_option("jobs", cancel->ids, "Job ids");
  cancel_cmd->add_option("-u,--user", cancel->user, "Jobs of this user");
  cancel_cmd->add_option("-n,--name", cancel->name, "Jobs of this name");
  cancel_cmd->add_option("-t,--state", cancel->states,
                         "Jobs in these states, comma-separated (PD, R, ... or names)");
  cancel_cmd->callback([cancel] { run_command([&] { cancel_jobs(*cancel); }); });
}

}  // namespace sched::cli
