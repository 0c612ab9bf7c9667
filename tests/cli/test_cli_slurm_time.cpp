// Slurm's time formats: parsing -t/--time and printing squeue/sacct columns.
#include <gtest/gtest.h>

#include <string>

#include "slurm_time.hpp"
#include "test_cli_support.hpp"

namespace sched::cli {
namespace {

TEST(CliSlurmTime, ParsesEveryForm) {
  EXPECT_EQ(parse_duration("30"), 30 * 60) << "M";
  EXPECT_EQ(parse_duration("90"), 90 * 60) << "the leading field may exceed 59";
  EXPECT_EQ(parse_duration("0"), 0);
  EXPECT_EQ(parse_duration("5:30"), 5 * 60 + 30) << "M:S";
  EXPECT_EQ(parse_duration("1:02:03"), 3600 + 2 * 60 + 3) << "H:M:S";
  EXPECT_EQ(parse_duration("48:00:00"), 48 * 3600) << "hours may exceed 23 without days";
  EXPECT_EQ(parse_duration("2-3"), 2 * 86400 + 3 * 3600) << "D-H";
  EXPECT_EQ(parse_duration("2-3:04"), 2 * 86400 + 3 * 3600 + 4 * 60) << "D-H:M";
  EXPECT_EQ(parse_duration("2-03:04:05"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5) << "D-H:M:S";
  EXPECT_EQ(parse_duration("0-0:0:1"), 1);
}

TEST(CliSlurmTime, UnlimitedAndInfiniteMeanNoLimit) {
  for (const char* text : {"UNLIMITED", "unlimited", "Unlimited", "INFINITE", "infinite"}) {
    EXPECT_EQ(parse_duration(text), 0) << text;
  }
}

TEST(CliSlurmTime, RejectsBadTimes) {
  for (const char* text :
       {"",        "abc",     "1h",      "1.5",        "+5",        " 5",        "5 ",
        "-5",      "5:-3",    "1:2:3:4", "1:",         ":1",        "1::2",      "1:60",
        "1:00:60", "1:60:00", "1-24",    "1-2:60",     "1-2:3:60",  "1-2:3:4:5", "1-",
        "-1",      "1--2",    "1-2-3",   "9999999999", "unlimitedx"}) {
    EXPECT_EQ(parse_duration(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(CliSlurmTime, FormatsDurationsLikeSqueue) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(59), "0:59");
  EXPECT_EQ(format_duration(59.9), "0:59") << "rounded down";
  EXPECT_EQ(format_duration(61), "1:01");
  EXPECT_EQ(format_duration(3599), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(86399), "23:59:59");
  EXPECT_EQ(format_duration(86400), "1-00:00:00");
  EXPECT_EQ(format_duration(93784), "1-02:03:04");
  EXPECT_EQ(format_duration(12 * 86400 + 5), "12-00:00:05");
  EXPECT_EQ(format_duration(-1), "N/A");
}

TEST(CliSlurmTime, FormatsTimeLimits) {
  EXPECT_EQ(format_time_limit(0), "UNLIMITED");
  EXPECT_EQ(format_time_limit(-1), "UNLIMITED");
  EXPECT_EQ(format_time_limit(3600), "1:00:00");
  EXPECT_EQ(format_time_limit(30 * 60), "30:00");
}

TEST(CliSlurmTime, FormatsElapsedLikeSacct) {
  EXPECT_EQ(format_elapsed(0), "00:00:00");
  EXPECT_EQ(format_elapsed(3723), "01:02:03");
  EXPECT_EQ(format_elapsed(93784), "1-02:03:04");
  EXPECT_EQ(format_elapsed(-1), "N/A");
}

TEST(CliSlurmTime, FormattedDurationsParseBack) {
  for (std::int64_t seconds : {0, 1, 59, 60, 61, 3599, 3600, 3661, 86399, 86400, 93784, 1000000}) {
    EXPECT_EQ(parse_duration(format_duration(static_cast<double>(seconds))), seconds) << seconds;
  }
}

TEST(CliSlurmTime, FormatsTimestampsInLocalTime) {
  {
    testing::ScopedTimeZone utc("UTC0");
    EXPECT_EQ(format_timestamp(0), "1970-01-01T00:00:00");
    EXPECT_EQ(format_timestamp(1795316645), "2026-11-22T03:04:05");
    EXPECT_EQ(format_timestamp(1795316645.9), "2026-11-22T03:04:05");
  }
  {
    testing::ScopedTimeZone east("XXX-2");  // POSIX: two hours ahead of UTC
    EXPECT_EQ(format_timestamp(1795316645), "2026-11-22T05:04:05");
  }
  EXPECT_EQ(format_timestamp(-1), "N/A");
}

TEST(CliSlurmTime, FormatsExitCodeAndSignal) {
  EXPECT_EQ(format_exit_code(0), "0:0");
  EXPECT_EQ(format_exit_code(3), "3:0");
  EXPECT_EQ(format_exit_code(-9), "0:9") << "killed by SIGKILL";
}

}  // namespace
}  // namespace sched::cli
