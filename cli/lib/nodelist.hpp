// Slurm-style host lists for the CLI: the functions live with the task
// layout (sched/tasks/nodelist.hpp) because the node agent spells
// SLURM_JOB_NODELIST with them too.
#pragma once

#include "sched/tasks/nodelist.hpp"

namespace sched::cli {
using tasks::compress_nodelist;
using tasks::compress_sorted_nodelist;
using tasks::expand_nodelist;
using tasks::sort_nodelist;
}  // namespace sched::cli
