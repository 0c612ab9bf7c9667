// The Prometheus text exposition writer (schedd/http/prom_text.hpp): the
// format's lines, label escaping, cumulative histogram buckets, and the
// names the format allows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "http/prom_text.hpp"

namespace sched::daemon::http {
namespace {

TEST(PromText, ACounterFamilyHasHelpTypeAndOneLinePerLabelSet) {
  PromWriter w;
  w.family("sched_refusals_total", MetricType::Counter, "Refused actions");
  w.sample({{"code", "placement"}}, 3);
  w.sample({{"code", "below_min"}}, 0);
  EXPECT_EQ(w.text(),
            "# HELP sched_refusals_total Refused actions\n"
            "# TYPE sched_refusals_total counter\n"
            "sched_refusals_total{code=\"placement\"} 3\n"
            "sched_refusals_total{code=\"below_min\"} 0\n");
}

TEST(PromText, AGaugeWithoutLabelsHasNoBraces) {
  PromWriter w;
  w.family("sched_power_watts", MetricType::Gauge, "Power");
  w.sample({}, 1234.5);
  EXPECT_EQ(w.text(),
            "# HELP sched_power_watts Power\n# TYPE sched_power_watts gauge\n"
            "sched_power_watts 1234.5\n");
}

TEST(PromText, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_label_value("plain value, with {braces}"), "plain value, with {braces}");
  PromWriter w;
  w.family("m", MetricType::Gauge, "h");
  w.sample({{"user", "o\"brien\\x\ny"}, {"partition", "default"}}, 1);
  EXPECT_NE(w.text().find("m{user=\"o\\\"brien\\\\x\\ny\",partition=\"default\"} 1\n"),
            std::string::npos)
      << w.text();
}

TEST(PromText, HelpEscapesBackslashAndNewlineButNotQuotes) {
  PromWriter w;
  w.family("m", MetricType::Gauge, "a \"quoted\" \\ text\nsecond line");
  EXPECT_EQ(w.text().substr(0, w.text().find('\n') + 1),
            "# HELP m a \"quoted\" \\\\ text\\nsecond line\n");
}

TEST(PromText, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Histogram h({0.25, 1, 10});
  for (double v : {0.125, 0.25, 0.5, 4.0, 64.0}) h.observe(v);
  PromWriter w;
  w.family("d_seconds", MetricType::Histogram, "d");
  w.histogram({{"kind", "expand"}}, h);
  EXPECT_EQ(w.text(),
            "# HELP d_seconds d\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{kind=\"expand\",le=\"0.25\"} 2\n"  // a value on a bound is in it
            "d_seconds_bucket{kind=\"expand\",le=\"1\"} 3\n"
            "d_seconds_bucket{kind=\"expand\",le=\"10\"} 4\n"
            "d_seconds_bucket{kind=\"expand\",le=\"+Inf\"} 5\n"
            "d_seconds_sum{kind=\"expand\"} 68.875\n"
            "d_seconds_count{kind=\"expand\"} 5\n");
}

TEST(PromText, AnEmptyHistogramWithoutLabelsHasOnlyLe) {
  PromWriter w;
  w.family("p", MetricType::Histogram, "p");
  w.histogram({}, Histogram({0.5}));
  EXPECT_EQ(w.text(),
            "# HELP p p\n# TYPE p histogram\np_bucket{le=\"0.5\"} 0\np_bucket{le=\"+Inf\"} 0\n"
            "p_sum 0\np_count 0\n");
}

TEST(PromText, NumbersAreShortestRoundTripWithInfAndNaNSpelledOut) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(-3), "-3");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(std::stod(format_value(1e-5)), 1e-5);
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(1e20), "1e+20");
}

TEST(PromText, BadNamesAndMisuseAreRefused) {
  EXPECT_TRUE(valid_metric_name("sched_jobs"));
  EXPECT_TRUE(valid_metric_name("a:b_c9"));
  EXPECT_FALSE(valid_metric_name("9jobs"));
  EXPECT_FALSE(valid_metric_name("sched-jobs"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_TRUE(valid_label_name("state"));
  EXPECT_FALSE(valid_label_name("a:b"));
  EXPECT_FALSE(valid_label_name("__name__"));

  PromWriter w;
  EXPECT_THROW(w.sample({}, 1), std::invalid_argument);  // no family yet
  EXPECT_THROW(w.family("bad name", MetricType::Gauge, "h"), std::invalid_argument);
  w.family("g", MetricType::Gauge, "h");
  EXPECT_THROW(w.family("g", MetricType::Counter, "again"), std::invalid_argument);
  EXPECT_THROW(w.sample({{"bad-label", "x"}}, 1), std::invalid_argument);
  EXPECT_THROW(w.sample({{"le", "1"}}, 1), std::invalid_argument);
  EXPECT_THROW(w.histogram({}, Histogram({1})), std::invalid_argument);
  w.family("h", MetricType::Histogram, "h");
  EXPECT_THROW(w.sample({}, 1), std::invalid_argument);
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace sched::daemon::http
