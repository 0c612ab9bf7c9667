// `sched acct`: ended jobs from the journal, like sacct.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <deque>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "json_list.hpp"
#include "listings.hpp"
#include "pages.hpp"
#include "sched/job_array.hpp"

namespace sched::cli {
namespace {

constexpr std::string_view kTimeForms = "YYYY-MM-DD[THH:MM[:SS]] (local time) or now[-N[unit]]";

std::optional<long> whole_number(std::string_view text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// Seconds in a unit of Slurm's now-N form; a bare number counts seconds.
std::optional<long> unit_seconds(std::string unit) {
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 's') unit.pop_back();  // plurals
  if (unit.empty() || unit == "sec" || unit == "second") return 1;
  if (unit == "min" || unit == "minute") return 60;
  if (unit == "h" || unit == "hour") return 3600;
  if (unit == "d" || unit == "day") return 86400;
  if (unit == "w" || unit == "week") return 7 * 86400;
  return std::nullopt;
}

// "now", "now-1hour", "now+30min", "now-90".
std::optional<double> parse_relative(std::string_view text) {
  if (text.substr(0, 3) != "now") return std::nullopt;
  const double now = static_cast<double>(std::time(nullptr));
  text.remove_prefix(3);
  if (text.empty()) return now;
  const int sign = text[0] == '-' ? -1 : text[0] == '+' ? 1 : 0;
  if (sign == 0) return std::nullopt;
  text.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const auto count = whole_number(text.substr(0, digits));
  const auto unit = unit_seconds(std::string(text.substr(digits)));
  if (!count || !unit) return std::nullopt;
  return now + sign * static_cast<double>(*count * *unit);
}

// YYYY-MM-DD[THH:MM[:SS]] in local time. Dates that mktime would carry over
// (February 30) are refused rather than moved.
std::optional<double> parse_absolute(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int used = 0;
  const int fields = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &used);
  if (fields != 3 || used != 10) return std::nullopt;
  if (static_cast<std::size_t>(used) < text.size()) {
    int more = 0;
    const std::string rest = text.substr(static_cast<std::size_t>(used));
    if (std::sscanf(rest.c_str(), "T%2d:%2d%n", &hour, &minute, &more) != 2 || more != 6) {
      return std::nullopt;
    }
    if (static_cast<std::size_t>(more) < rest.size()) {
      int tail = 0;
      const std::string seconds = rest.substr(static_cast<std::size_t>(more));
      if (std::sscanf(seconds.c_str(), ":%2d%n", &second, &tail) != 1 || tail != 3 ||
          static_cast<std::size_t>(tail) != seconds.size()) {
        return std::nullopt;
      }
    }
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 59) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == -1 || tm.tm_mday != day || tm.tm_mon != month - 1) return std::nullopt;
  return static_cast<double>(t);
}

double parse_time(const std::string& text, const char* option) {
  auto t = parse_relative(text);
  if (!t) t = parse_absolute(text);
  if (!t) {
    throw std::runtime_error("bad time '" + text + "' for " + option + ": use " +
                             std::string(kTimeForms));
  }
  return *t;
}

JobState job_state(const std::string& name) {
  if (auto state = parse_job_state(name)) return *state;
  throw std::runtime_error("schedd sent an unknown job state '" + name + "'");
}

AcctRow acct_row(const proto::JobInfo& job) {
  AcctRow row;
  row.id = job.id;
  // ---- job arrays (issue 18 item 1)
  if (job.array_job_id && job.array_task_id) {
    row.display_id = array_task_name(*job.array_job_id, *job.array_task_id);
  }
  row.name = job.name;
  row.user = job.user;
  row.state = job_state(job.state);
  row.exit_status = job.exit_status.value_or(0);
  row.nodes = job.nodes;
  row.nodelist = job.nodelist;
  row.start = job.start_time.value_or(-1);
  row.end = job.end_time.value_or(-1);
  if (job.start_time && job.end_time) row.elapsed = *job.end_time - *job.start_time;
  if (job.max_rss_bytes && *job.max_rss_bytes >= 0) {
    row.max_rss_bytes = static_cast<std::uint64_t>(*job.max_rss_bytes);
  }
  row.cpu_s = job.cpu_s;
  row.reason = job.reason;
  row.account = job.account.value_or("");
  row.qos = job.qos.value_or("");
  row.partition = job.partition.value_or("");
  return row;
}

// As many as schedd gives in one page (it bounds pages by bytes too).
constexpr std::int64_t kAcctPageJobs = 10000;

struct AcctArgs {
  std::string user;
  std::vector<std::string> states;
  std::string start;
  std::string end;
  std::vector<std::string> ids;
  std::int64_t limit = 0;
  bool json = false;
  bool usage = false;
  std::string partition;  // -r/--partition (sacct's -r): only this partition's jobs (issue 20)
};

proto::AcctQuery acct_query(const AcctArgs& args) {
  proto::AcctQuery query;
  if (!args.user.empty()) query.user = args.user;
  if (!args.states.empty()) {
    query.states.emplace();
    for (const auto& text : args.states) {
      const auto state = parse_state_filter(text);
      if (!state) {
        throw std::runtime_error("unknown job state '" + text +
                                 "' (codes like CD, F, CA, TO, or names like COMPLETED)");
      }
      query.states->push_back(std::string(to_string(*state)));
    }
  }
  if (!args.start.empty()) query.since = parse_time(args.start, "--starttime");
  if (!args.end.empty()) query.until = parse_time(args.end, "--endtime");
  if (!args.ids.empty()) {
    query.ids.emplace();
    for (const auto& text : args.ids) {
      const auto id = whole_number(text);
      if (!id || *id == 0) throw std::runtime_error("bad job id '" + text + "'");
      query.ids->push_back(*id);
    }
  }
  query.limit = kAcctPageJobs;
  return query;
}

// The jobs of `query`'s pages newest first (by end time, then id), `limit`
// at most (0: all): the most recent ones, as a user of `sacct | tail`
// wants, not the oldest the journal holds. schedd pages oldest first, so
// every page is read and only the newest `limit` kept.
std::vector<proto::JobInfo> acct_jobs(const proto::AcctQuery& query, std::int64_t limit,
                                      const std::string& partition) {
  std::deque<proto::JobInfo> kept;
  for_each_page<proto::JobList>(proto::type::kAcct, query, [&](proto::JobList page) {
    for (auto& job : page.jobs) {
      if (!partition.empty() && job.partition.value_or("") != partition) continue;
      kept.push_back(std::move(job));
      if (limit > 0 && static_cast<std::int64_t>(kept.size()) > limit) kept.pop_front();
    }
    return true;
  });
  return {std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend())};
}

}  // namespace

void add_acct_command(CLI::App& app) {
  auto args = std::make_shared<AcctArgs>();
  CLI::App* acct = app.add_subcommand("acct", "Ended jobs (like sacct), newest first by end time");
  acct->add_option("-u,--user", args->user, "Only this user's jobs");
  acct->add_option("-s,--state", args->states, "Only these states: CD,F,CA,TO or names")
      ->delimiter(',');
  acct->add_option("-S,--starttime", args->start,
                   "Jobs that ended at or after this: " + std::string(kTimeForms));
  acct->add_option("-E,--endtime", args->end, "Jobs that ended at or before this (same forms)");
  acct->add_option("-j,--jobs", args->ids, "Only these job ids (comma-separated)")->delimiter(',');
  acct->add_option("--limit", args->limit, "The N most recently ended jobs")
      ->check(positive_number());
  acct->add_flag("--json", args->json, "Print {\"jobs\": [...]} as JSON");
  acct->add_option("-r,--partition", args->partition, "Only this partition's jobs");
  acct->add_flag(
      "-l,--long", args->usage,
      "Also Account, QOS, MaxRSS and TotalCPU (what the job's cgroup measured) and the end "
      "reason");
  acct->callback([args] {
    run_command([&] {
      const proto::AcctQuery query = acct_query(*args);
      const std::vector<proto::JobInfo> jobs = acct_jobs(query, args->limit, args->partition);
      if (args->json) {
        JsonList out(std::cout, "jobs");
        for (const auto& job : jobs) out.add(to_json(job));
        out.finish();
        return;
      }
      // The Partition column where partitions are configured (issue 20 item 1).
      AcctTable table(args->usage, partitions_configured());
      for (const auto& job : jobs) table.add(acct_row(job));
      std::cout << table.render();
    });
  });
}

}  // namespace sched::cli
