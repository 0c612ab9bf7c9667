#include "sched/daemon_log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace sched::layout {
namespace {

// %* : the line's syslog priority, "<3>" for error, as journald reads it.
class SyslogPriority final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    static constexpr std::array<char, 7> priorities = {'7', '7', '6', '4', '3', '2', '6'};
    const char text[] = {'<', priorities[static_cast<std::size_t>(msg.level)], '>'};
    dest.append(text, text + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriority>();
  }
};

}  // namespace

bool valid_log_level(const std::string& level) {
  return level == "trace" || level == "debug" || level == "info" || level == "warn" ||
         level == "error";
}

void setup_daemon_log(const std::string& program, const LogOptions& options) {
  if (!valid_log_level(options.level)) {
    throw std::runtime_error("log level '" + options.level +
                             "': expected trace, debug, info, warn or error");
  }
  spdlog::sink_ptr sink;
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (!options.file.empty()) {
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file, false);
    } catch (const spdlog::spdlog_ex& e) {
      throw std::runtime_error("log file " + options.file + ": " + e.what());
    }
    formatter->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [" + program + "] [%l] %v");
  } else if (const char* journal = std::getenv("JOURNAL_STREAM"); journal && *journal) {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    formatter->add_flag<SyslogPriority>('*').set_pattern("%*%l: %v");
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    formatter->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [" + program + "] [%^%l%$] %v");
  }
  sink->set_formatter(std::move(formatter));
  auto logger = std::make_shared<spdlog::logger>(program, std::move(sink));
  logger->set_level(spdlog::level::from_str(options.level));
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace sched::layout
