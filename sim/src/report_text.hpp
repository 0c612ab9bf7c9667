// Numbers as the reports and pictures print them, appended to one buffer
// (sched/plot/text_buffer.hpp) rather than made a string each.
#pragma once

#include "sched/plot/text_buffer.hpp"

namespace sched::sim {

// Appends what format_seconds(seconds) (sched/sim/report.hpp) returns.
void append_seconds(plot::TextBuffer& out, double seconds);

// Writes `text` to `path` in one go, replacing the file. Throws
// std::runtime_error "cannot open PATH for writing" or "error writing PATH".
void write_text_file(const std::string& path, std::string_view text);

}  // namespace sched::sim
