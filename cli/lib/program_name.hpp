// The name this program was run as, for messages: "sched", or the Slurm
// front end's ("sbatch: error: ..." reads as Slurm users expect).
#pragma once

#include <string>

namespace sched::cli {

const std::string& program_name();  // "sched" until set
void set_program_name(std::string name);

}  // namespace sched::cli
