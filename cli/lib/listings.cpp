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
  cells.push_back(std::to_string(row.id));
  cells.push_back(row.name);
  cells.push_back(row.user);
  cells.emplace_back(state_code(row.state));
  cells.push_back(format_duration(row.elapsed));
  cells.push_back(format_time_limit(row.limit));
  if (show_start_) cells.push_back(format_timestamp(row.expected_start));
  cells.push_back(std::to_string(row.nodes));
  if (!row.nodelist.empty()) {
    cells.push_back(compress_nodelist(row.nodelist));
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

std::string render_nodes(const std::vector<NodeRow>& rows) {
  Table table({{"NODE", Align::Left},
               {"STATE", Align::Left},
               {"CPUS", Align::Right},
               {"JOBS", Align::Left}});
  for (const auto& row : rows) {
    std::string jobs;
    for (JobId id : row.jobs) jobs += (jobs.empty() ? "" : ",") + std::to_string(id);
    table.add_row({row.name, std::string(to_sinfo(row.state)), std::to_string(row.cpus),
                   jobs.empty() ? "-" : jobs});
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

AcctTable::AcctTable()
    : table_({{"JobID", Align::Left},
              {"JobName", Align::Left},
              {"User", Align::Left},
              {"State", Align::Left},
              {"ExitCode", Align::Right},
              {"Elapsed", Align::Right},
              {"NNodes", Align::Right},
              {"NodeList", Align::Left},
              {"Start", Align::Left},
              {"End", Align::Left}}) {
  table_.set_underline(true);
}

void AcctTable::add(const AcctRow& row) {
  table_.add_row({std::to_string(row.id), row.name, row.user, std::string(to_string(row.state)),
                  format_exit_code(row.exit_status), format_elapsed(row.elapsed),
                  std::to_string(row.nodes),
                  row.nodelist.empty() ? "None assigned" : compress_nodelist(row.nodelist),
                  format_timestamp(row.start), format_timestamp(row.end)});
}

std::string render_acct(const std::vector<AcctRow>& rows) {
  AcctTable table;
  for (const auto& row : rows) table.add(row);
  return table.render();
}

}  // namespace sched::cli
