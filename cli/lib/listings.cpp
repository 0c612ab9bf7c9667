#include "listings.hpp"

#include <array>

#include "nodelist.hpp"
#include "slurm_time.hpp"

namespace sched::cli {

namespace {

std::vector<Column> queue_columns(bool show_start) {
  std::vector<Column> columns = {{"JOBID", Align::Right}, {"NAME", Align::Left},
                                 {"USER", Align::Left},   {"ST", Align::Left},
                                 {"TIME", Align::Right},  {"TIME_LIMIT", Align::Right}};
  if (show_start) columns.push_back({"START_TIME", Align::Left});
  columns.push_back({"NODES", Align::Right});
  columns.push_back({"NODELIST(REASON)", Align::Left});
  return columns;
}

}  // namespace

QueueTable::QueueTable(bool show_start)
    : show_start_(show_start), table_(queue_columns(show_start)) {}

void QueueTable::add(const QueueRow& row) {
  std::vector<std::string> cells;
  cells.reserve(show_start_ ? 9 : 8);
  cells.push_back(row.shown_id());
  cells.push_back(row.name);
  cells.push_back(row.user);
  cells.emplace_back(state_code(row.state));
  cells.push_back(format_duration(row.elapsed));
  cells.push_back(format_time_limit(row.limit));
  if (show_start_) cells.push_back(format_timestamp(row.expected_start));
  cells.push_back(std::to_string(row.nodes));
  if (!row.nodelist.empty()) {
    cells.push_back(compress_sorted_nodelist(row.nodelist));
  } else {
    cells.push_back("(" + (row.reason.empty() ? std::string("None") : row.reason) + ")");
  }
  table_.add_row(std::move(cells));
}

std::string render_queue(const std::vector<QueueRow>& rows, bool show_start) {
  QueueTable table(show_start);
  for (const auto& row : rows) table.add(row);
  return table.render();
}

std::string render_nodes(const std::vector<NodeRow>& rows, bool isolation) {
  std::vector<Column> columns = {
      {"NODE", Align::Left}, {"STATE", Align::Left}, {"CPUS", Align::Right}, {"JOBS", Align::Left}};
  if (isolation) {
    columns.push_back({"CONTAINMENT", Align::Left});
    columns.push_back({"RUN_AS", Align::Left});
  }
  Table table(std::move(columns));
  for (const auto& row : rows) {
    std::string jobs;
    for (JobId id : row.jobs) jobs += (jobs.empty() ? "" : ",") + std::to_string(id);
    std::vector<std::string> cells = {row.name, std::string(to_sinfo(row.state)),
                                      std::to_string(row.cpus), jobs.empty() ? "-" : jobs};
    if (isolation) {
      cells.push_back(row.containment.empty() ? "-" : row.containment);
      cells.push_back(row.containment.empty() ? "-" : row.run_as.empty() ? "users" : row.run_as);
    }
    table.add_row(std::move(cells));
  }
  return table.render();
}

std::string render_node_summary(const std::vector<NodeRow>& rows) {
  constexpr std::array<NodeState, 6> kOrder = {NodeState::Idle,      NodeState::Mixed,
                                               NodeState::Allocated, NodeState::Draining,
                                               NodeState::Drained,   NodeState::Down};
  Table table({{"STATE", Align::Left}, {"NODES", Align::Right}, {"NODELIST", Align::Left}});
  for (NodeState state : kOrder) {
    std::vector<std::string> names;
    for (const auto& row : rows) {
      if (row.state == state) names.push_back(row.name);
    }
    if (names.empty()) continue;
    table.add_row(
        {std::string(to_sinfo(state)), std::to_string(names.size()), compress_nodelist(names)});
  }
  return table.render();
}

namespace {

std::vector<Column> acct_columns(bool usage) {
  std::vector<Column> columns = {{"JobID", Align::Left},     {"JobName", Align::Left},
                                 {"User", Align::Left},      {"State", Align::Left},
                                 {"ExitCode", Align::Right}, {"Elapsed", Align::Right},
                                 {"NNodes", Align::Right},   {"NodeList", Align::Left},
                                 {"Start", Align::Left},     {"End", Align::Left}};
  if (usage) {
    columns.push_back({"Account", Align::Left});
    columns.push_back({"QOS", Align::Left});
    columns.push_back({"MaxRSS", Align::Right});
    columns.push_back({"TotalCPU", Align::Right});
    columns.push_back({"Reason", Align::Left});
  }
  return columns;
}

}  // namespace

AcctTable::AcctTable(bool usage) : table_(acct_columns(usage)), usage_(usage) {
  table_.set_underline(true);
}

void AcctTable::add(const AcctRow& row) {
  std::vector<std::string> cells = {
      row.shown_id(),
      row.name,
      row.user,
      std::string(to_string(row.state)),
      format_exit_code(row.exit_status),
      format_elapsed(row.elapsed),
      std::to_string(row.nodes),
      row.nodelist.empty() ? "None assigned" : compress_sorted_nodelist(row.nodelist),
      format_timestamp(row.start),
      format_timestamp(row.end)};
  if (usage_) {
    cells.push_back(row.account);
    cells.push_back(row.qos.empty() ? "normal" : row.qos);
    // sacct's MaxRSS is in kibibytes with a K.
    cells.push_back(row.max_rss_bytes ? std::to_string((*row.max_rss_bytes + 1023) / 1024) + "K"
                                      : "N/A");
    cells.push_back(row.cpu_s ? format_elapsed(*row.cpu_s) : "N/A");
    cells.push_back(row.reason.empty() ? "None" : row.reason);
  }
  table_.add_row(std::move(cells));
}

std::string render_acct(const std::vector<AcctRow>& rows, bool usage) {
  AcctTable table(usage);
  for (const auto& row : rows) table.add(row);
  return table.render();
}

}  // namespace sched::cli
