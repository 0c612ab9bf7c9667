// `sched queue -o/--format` (issue 18 item 6): squeue's letters, widths and
// alignment, and the errors for what squeue's set here lacks.
#include <gtest/gtest.h>

#include <stdexcept>

#include "queue_format.hpp"
#include "slurm_time.hpp"

namespace sched::cli {
namespace {

QueueRow running() {
  QueueRow row;
  row.id = 42;
  row.name = "heat";
  row.user = "ada";
  row.state = JobState::Running;
  row.elapsed = 65;
  row.limit = 600;
  row.nodes = 4;
  row.nodelist = {"n4", "n2", "n3", "n1"};
  row.submit_time = 1000;
  row.start_time = 2000;
  return row;
}

std::string line(std::string_view format, const QueueRow& row, double now = 2065) {
  return format_queue_row(parse_queue_format(format), row, now);
}

TEST(QueueFormat, EachLetter) {
  const QueueRow row = running();
  EXPECT_EQ(line("%i|%j|%u|%t|%T", row), "42|heat|ada|R|RUNNING");
  EXPECT_EQ(line("%M|%l|%L|%D", row), "1:05|10:00|8:55|4");
  EXPECT_EQ(line("%N|%R|%P", row), "n[1-4]|n[1-4]|batch");
  EXPECT_EQ(line("%V|%S|%e", row),
            format_timestamp(1000) + "|" + format_timestamp(2000) + "|" + format_timestamp(2600));
  EXPECT_EQ(line("100%% %i", row), "100% 42");
}

TEST(QueueFormat, APendingJobShowsItsReasonAndExpectedStart) {
  QueueRow row;
  row.id = 7;
  row.state = JobState::Pending;
  row.reason = "Resources";
  row.limit = 0;
  row.expected_start = 5000;
  EXPECT_EQ(line("%t %R %N %L %l", row), "PD (Resources)  UNLIMITED UNLIMITED");
  EXPECT_EQ(line("%S|%e", row), format_timestamp(5000) + "|N/A");
}

TEST(QueueFormat, WidthsAlignAndCutAsSqueue) {
  const QueueRow row = running();
  EXPECT_EQ(line("%.6i|%-6j|%6u|%2T", row), "    42|heat  |ada   |RU");
  const auto fields = parse_queue_format("%.6i %-6j");
  EXPECT_EQ(format_queue_header(fields), " JOBID NAME  ");
  EXPECT_EQ(format_queue_header(parse_queue_format("%i %R")), "JOBID NODELIST(REASON)");
}

TEST(QueueFormat, UnknownLettersAndBrokenFieldsAreErrors) {
  EXPECT_THROW(parse_queue_format("%i %Q"), std::invalid_argument);
  EXPECT_THROW(parse_queue_format("%i %.5"), std::invalid_argument);
  try {
    parse_queue_format("%Z");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 34), "unknown format letter %Z in '%Z' (");
  }
}

}  // namespace
}  // namespace sched::cli
