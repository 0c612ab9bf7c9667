// Where schedd and nodeagent log (docs/admin.md "Logs"): a file, the journal
// or the terminal, at a level; set at start, and by schedd again on SIGHUP
// (which reopens the file, for logrotate).
#pragma once

#include <string>

namespace sched::layout {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn, error
  std::string file;            // "": stderr
};

// Whether `level` is one of the five names.
bool valid_log_level(const std::string& level);

// Makes `program`'s logger spdlog's default. To options.file (appended, with
// timestamps) when given; else to stderr: plain lines with their syslog
// priority in front ("<4>warning: ...") when $JOURNAL_STREAM says stderr is
// the journal (journald stamps lines itself and reads the priority), with
// timestamps otherwise. Throws std::runtime_error for an unknown level or a
// file that cannot be opened (the logger before stays).
void setup_daemon_log(const std::string& program, const LogOptions& options);

}  // namespace sched::layout
