// TextBuffer's numbers must be digit for digit what the reports and
// pictures printed before it: std::to_chars in fixed notation, then trailing
// zeros, a bare point and the sign of "-0" dropped. The reference below is
// that formatter, kept as it was.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sched/plot/text_buffer.hpp"

namespace sched::plot {
namespace {

std::string reference_fixed(double value, int decimals) {
  char buffer[400];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  if (error != std::errc{}) return "0";
  std::string text(buffer, end);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(TextBufferFixed, EdgeCases) {
  struct Case {
    double value;
    int decimals;
    const char* text;
  };
  const std::vector<Case> cases = {
      {0.0, 2, "0"},
      {-0.0, 2, "0"},  // negative zero
      {-0.0, 0, "0"},
      {-0.001, 2, "0"},  // a negative value that rounds to zero
      {-0.4, 0, "0"},
      {0.125, 2, "0.12"},  // exact ties round to even
      {0.375, 2, "0.38"},
      {2.5, 0, "2"},
      {3.5, 0, "4"},
      {-2.5, 0, "-2"},
      {0.005, 2, "0.01"},  // the double is a little above the tie
      {1.005, 2, "1"},     // ... and this one a little below
      {2.675, 2, "2.67"},
      {12.5, 6, "12.5"},
      {5094, 6, "5094"},
      {-1.5, 6, "-1.5"},
      {1.0 / 3.0, 6, "0.333333"},
      {2.0000001, 6, "2"},
      {0.1, 2, "0.1"},
      {99.995, 2, "100"},  // rounding carries into the integer part
      {959.999, 2, "960"},
      {123.456789, 2, "123.46"},
      {1e15, 2, "1000000000000000"},
      {4503599627370495.5, 0, "4503599627370496"},  // just below 2^52
      {9007199254740993.0, 6, "9007199254740992"},  // above 2^53
      {1e21, 2, "1000000000000000000000"},
      {-1e21, 2, "-1000000000000000000000"},
      {kInf, 2, "inf"},
      {-kInf, 2, "-inf"},
      {kNaN, 2, "nan"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.value) + " at " + std::to_string(c.decimals));
    EXPECT_EQ(fixed_text(c.value, c.decimals), c.text);
    EXPECT_EQ(reference_fixed(c.value, c.decimals), c.text);  // the old formatter agrees
  }
}

TEST(TextBufferFixed, LargeAndTinyValuesAsBefore) {
  const std::vector<double> values = {std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::min(),
                                      std::numeric_limits<double>::denorm_min(),
                                      4503599627370496.0,
                                      9007199254740992.0,
                                      1e300,
                                      1e-300,
                                      123456789012.345678};
  for (const double value : values) {
    for (int decimals = 0; decimals <= 17; ++decimals) {
      EXPECT_EQ(fixed_text(value, decimals), reference_fixed(value, decimals))
          << value << " at " << decimals;
      EXPECT_EQ(fixed_text(-value, decimals), reference_fixed(-value, decimals))
          << -value << " at " << decimals;
    }
  }
}

// Halves, quarters, ... up to 1/1024 of a unit at each decimal place: the
// exact ties and their neighbours, where a shortcut would round wrongly.
TEST(TextBufferFixed, TiesAndTheirNeighboursAsBefore) {
  for (int decimals = 0; decimals <= 15; ++decimals) {
    for (int k = -3000; k <= 3000; ++k) {
      for (const double value : {k / 1024.0, k / 8.0 + 1e6, k * 0.001, k * 0.005, k * 0.125e-6,
                                 std::nextafter(k / 8.0, kInf), std::nextafter(k / 8.0, -kInf)}) {
        ASSERT_EQ(fixed_text(value, decimals), reference_fixed(value, decimals))
            << value << " at " << decimals;
      }
    }
  }
}

// Doubles with random bits (every magnitude and sign) and random pixel
// coordinates and times.
TEST(TextBufferFixed, RandomValuesAsBefore) {
  std::mt19937_64 random(15);
  std::uniform_real_distribution<double> pixels(-100, 2000), seconds(0, 1e8);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t bits = random();
    double any;
    std::memcpy(&any, &bits, sizeof any);
    const int decimals = static_cast<int>(random() % 18);
    ASSERT_EQ(fixed_text(any, decimals), reference_fixed(any, decimals)) << any;
    const double pixel = pixels(random), time = seconds(random);
    ASSERT_EQ(fixed_text(pixel, 2), reference_fixed(pixel, 2)) << pixel;
    ASSERT_EQ(fixed_text(time, 6), reference_fixed(time, 6)) << time;
  }
}

TEST(TextBuffer, IntegersAtTheLimits) {
  TextBuffer text;
  for (const long long value : {0LL, -1LL, 42LL, std::numeric_limits<long long>::max(),
                                std::numeric_limits<long long>::min()}) {
    text.append_integer(value);
    text += ' ';
  }
  EXPECT_EQ(text.take(), "0 -1 42 9223372036854775807 -9223372036854775808 ");
}

TEST(TextBuffer, GrowsAndHandsOverItsText) {
  TextBuffer text;
  std::string expected;
  for (int i = 0; i < 10000; ++i) {
    text += "row ";
    text.append_fixed(i / 4.0, 2);
    text += '\n';
    expected += "row " + reference_fixed(i / 4.0, 2) + "\n";
  }
  EXPECT_EQ(text.size(), expected.size());
  EXPECT_EQ(text.view(), expected);
  EXPECT_EQ(text.take(), expected);
  EXPECT_EQ(text.size(), 0u);
  text += "again";
  EXPECT_EQ(text.take(), "again");
  text += "dropped";
  text.clear();
  text += "kept";
  EXPECT_EQ(text.view(), "kept");
}

}  // namespace
}  // namespace sched::plot
