#include "listings.hpp"

#include <algorithm>
#include <array>

#include "nodelist.hpp"
#include "slurm_time.hpp"

namespace sched::cli {

namespace {

std::vector<Column> queue_columns(bool show_start, bool partitions) {
  std::vector<Column> columns = {{"JOBID", Align::Right}, {"NAME", Align::Left},
                                 {"USER", Align::Left},   {"ST", Align::Left},
                                 {"TIME", Align::Right},  {"TIME_LIMIT", Align::Right}};
  if (partitions) columns.insert(columns.begin() + 1, Column{"PARTITION", Align::Left});
  if (show_start) columns.push_back({"START_TIME", Align::Left});
  columns.push_back({"NODES", Align::Right});
  columns.push_back({"NODELIST(REASON)", Align::Left});
  return columns;
}

}  // namespace

QueueTable::QueueTable(bool show_start, bool partitions)
    : show_start_(show_start),
      partitions_(partitions),
      table_(queue_columns(show_start, partitions)) {}

void QueueTable::add(const QueueRow& row) {
  std::vector<std::string> cells;
  cells.reserve(10);
  cells.push_back(row.shown_id());
  if (partitions_) cells.push_back(row.partition);
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

std::string render_queue(const std::vector<QueueRow>& rows, bool show_start, bool partitions) {
  QueueTable table(show_start, partitions);
  for (const auto& row : rows) table.add(row);
  return table.render();
}

std::string render_nodes(const std::vector<NodeRow>& rows, bool isolation, bool partitions) {
  std::vector<Column> columns = {
      {"NODE", Align::Left}, {"STATE", Align::Left}, {"CPUS", Align::Right}, {"JOBS", Align::Left}};
  if (partitions) columns.insert(columns.begin() + 1, Column{"PARTITION", Align::Left});
  if (isolation) {
    columns.push_back({"CONTAINMENT", Align::Left});
    columns.push_back({"RUN_AS", Align::Left});
  }
  Table table(std::move(columns));
  for (const auto& row : rows) {
    std::string jobs;
    for (JobId id : row.jobs) jobs += (jobs.empty() ? "" : ",") + std::to_string(id);
    std::vector<std::string> cells = {
        row.name, std::string(to_sinfo(row.state)),
        row.cpus_alloc ? std::to_string(*row.cpus_alloc) + "/" + std::to_string(row.cpus)
                       : std::to_string(row.cpus),
        jobs.empty() ? "-" : jobs};
    if (partitions) cells.insert(cells.begin() + 1, row.partition);
    if (isolation) {
      cells.push_back(row.containment.empty() ? "-" : row.containment);
      cells.push_back(row.containment.empty() ? "-" : row.run_as.empty() ? "users" : row.run_as);
    }
    table.add_row(std::move(cells));
  }
  return table.render();
}

std::string render_node_summary(const std::vector<NodeRow>& rows, bool partitions) {
  constexpr std::array<NodeState, 6> kOrder = {NodeState::Idle,      NodeState::Mixed,
                                               NodeState::Allocated, NodeState::Draining,
                                               NodeState::Drained,   NodeState::Down};
  std::vector<Column> columns = {
      {"STATE", Align::Left}, {"NODES", Align::Right}, {"NODELIST", Align::Left}};
  if (partitions) columns.insert(columns.begin(), Column{"PARTITION", Align::Left});
  Table table(std::move(columns));
  // Without partitions, one group holding every row.
  std::vector<std::string> groups;
  for (const auto& row : rows) {
    const std::string group = partitions ? row.partition : std::string();
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  for (const std::string& group : groups) {
    for (NodeState state : kOrder) {
      std::vector<std::string> names;
      for (const auto& row : rows) {
        if (row.state == state && (!partitions || row.partition == group)) {
          names.push_back(row.name);
        }
      }
      if (names.empty()) continue;
      std::vector<std::string> cells = {std::string(to_sinfo(state)), std::to_string(names.size()),
                                        compress_nodelist(names)};
      if (partitions) cells.insert(cells.begin(), group);
      table.add_row(std::move(cells));
    }
  }
  return table.render();
}

namespace {

std::vector<Column> acct_columns(bool usage, bool partitions) {
  std::vector<Column> columns = {{"JobID", Align::Left},     {"JobName", Align::Left},
                                 {"User", Align::Left},      {"State", Align::Left},
                                 {"ExitCode", Align::Right}, {"Elapsed", Align::Right},
                                 {"NNodes", Align::Right},   {"NodeList", Align::Left},
                                 {"Start", Align::Left},     {"End", Align::Left}};
  if (partitions) columns.insert(columns.begin() + 2, Column{"Partition", Align::Left});
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

AcctTable::AcctTable(bool usage, bool partitions)
    : table_(acct_columns(usage, partitions)), usage_(usage), partitions_(partitions) {
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
  if (partitions_) cells.insert(cells.begin() + 2, row.partition);
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

std::string render_acct(const std::vector<AcctRow>& rows, bool usage, bool partitions) {
  AcctTable table(usage, partitions);
  for (const auto& row : rows) table.add(row);
  return table.render();
}

}  // namespace sched::cli
