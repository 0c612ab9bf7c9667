// Numbers as the reports and pictures print them, appended to one buffer
// (sched/plot/text_buffer.hpp) rather than made a string each.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "sched/plot/text_buffer.hpp"

namespace sched::sim {

// Appends what format_seconds(seconds) (sched/sim/report.hpp) returns.
inline void append_seconds(plot::TextBuffer& out, double seconds) {
  if (std::isfinite(seconds)) {
    out.append_fixed(seconds, 6);
  } else {
    out += std::isnan(seconds) ? "nan" : (seconds > 0 ? "inf" : "-inf");
  }
}

// Writes `text` to `path` in one go, replacing the file. Throws
// std::runtime_error "cannot open PATH for writing" or "error writing PATH".
void write_text_file(const std::string& path, std::string_view text);

}  // namespace sched::sim
