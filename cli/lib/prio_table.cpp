#include "prio_table.hpp"

#include "table.hpp"

namespace sched::cli {
namespace {

Table prio_table() {
  return Table({{"JOBID", Align::Right},
                {"USER", Align::Left},
                {"PRIORITY", Align::Right},
                {"AGE", Align::Right},
                {"FAIRSHARE", Align::Right},
                {"JOBSIZE", Align::Right},
                {"QOS", Align::Right},
                {"NICE", Align::Right}});
}

void add_weights(Table& table, const PrioWeights& w) {
  table.add_row({"Weights", "", "", std::to_string(w.age), std::to_string(w.fairshare),
                 std::to_string(w.jobsize), std::to_string(w.qos), ""});
}

}  // namespace

std::string render_prio(const std::vector<PrioRow>& rows, const PrioWeights* weights) {
  Table table = prio_table();
  if (weights) add_weights(table, *weights);
  for (const PrioRow& row : rows) {
    table.add_row({std::to_string(row.id), row.user, std::to_string(row.priority),
                   std::to_string(row.age), std::to_string(row.fairshare),
                   std::to_string(row.jobsize), std::to_string(row.qos), std::to_string(row.nice)});
  }
  return table.render();
}

std::string render_prio_weights(const PrioWeights& weights) {
  Table table = prio_table();
  add_weights(table, weights);
  return table.render();
}

}  // namespace sched::cli
