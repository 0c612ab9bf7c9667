#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sched/plot/svg_plot.hpp"

namespace sched::plot {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The start tags `<name ...>` of every `name` element, in document order.
std::vector<std::string> start_tags(const std::string& svg, const std::string& name) {
  std::vector<std::string> tags;
  const std::string open = "<" + name + " ";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1))
    tags.push_back(svg.substr(at, svg.find('>', at) - at + 1));
  return tags;
}

std::vector<std::string> tags_with_class(const std::string& svg, const std::string& name,
                                         const std::string& css_class) {
  std::vector<std::string> tags;
  for (const auto& tag : start_tags(svg, name))
    if (tag.find("class=\"" + css_class + "\"") != std::string::npos) tags.push_back(tag);
  return tags;
}

// The value of ` name="..."` in a start tag; the leading space keeps "x"
// from matching "cx" or "x1".
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return {};
  const auto from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

double number(const std::string& tag, const std::string& name) {
  return std::stod(attribute(tag, name));
}

std::vector<std::pair<double, double>> polyline_points(const std::string& tag) {
  std::vector<std::pair<double, double>> points;
  std::istringstream in(attribute(tag, "points"));
  std::string pair;
  while (in >> pair) {
    const auto comma = pair.find(',');
    points.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return points;
}

// Well-formedness enough for our output: one prolog, then properly nested
// elements under a single <svg> root, with no stray '<' or '&'.
::testing::AssertionResult well_formed(const std::string& svg) {
  std::vector<std::string> open;
  int roots = 0;
  std::size_t at = 0;
  if (svg.rfind("<?xml", 0) == 0) at = svg.find("?>") + 2;
  while ((at = svg.find('<', at)) != std::string::npos) {
    const auto close = svg.find('>', at);
    if (close == std::string::npos) return ::testing::AssertionFailure() << "unclosed tag";
    const std::string tag = svg.substr(at + 1, close - at - 1);
    if (tag.find('<') != std::string::npos)
      return ::testing::AssertionFailure() << "'<' inside tag: " << tag;
    if (tag.front() == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure() << "unbalanced </" << name << ">";
      open.pop_back();
    } else {
      const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
      if (open.empty()) ++roots;
      if (tag.back() != '/') open.push_back(name);
    }
    at = close + 1;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "unclosed <" << open.back() << ">";
  if (roots != 1) return ::testing::AssertionFailure() << roots << " root elements";
  for (auto amp = svg.find('&'); amp != std::string::npos; amp = svg.find('&', amp + 1)) {
    const auto semicolon = svg.find(';', amp);
    const std::string entity = svg.substr(amp, semicolon - amp + 1);
    if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
        entity != "&apos;")
      return ::testing::AssertionFailure() << "bad entity " << entity;
  }
  return ::testing::AssertionSuccess();
}

// Every geometric attribute holds finite numbers only (no nan, no inf).
::testing::AssertionResult finite_geometry(const std::string& svg) {
  for (const char* element : {"line", "rect", "circle", "polyline", "text"}) {
    for (const auto& tag : start_tags(svg, element)) {
      for (const char* name :
           {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points"}) {
        std::string value = attribute(tag, name);
        for (char& c : value)
          if (c == ',') c = ' ';
        std::istringstream in(value);
        std::string token;
        while (in >> token) {
          char* end = nullptr;
          const double parsed = std::strtod(token.c_str(), &end);
          if (*end != '\0' || !std::isfinite(parsed))
            return ::testing::AssertionFailure() << name << "=\"" << value << "\" in " << tag;
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

Figure one_panel(std::vector<Series> series) {
  Figure figure;
  Panel panel;
  panel.title = "panel";
  panel.x_label = "x";
  panel.y_label = "y";
  panel.series = std::move(series);
  figure.panels.push_back(std::move(panel));
  return figure;
}

// The paper-1 figure: four metrics against the malleable fraction, three policies.
Figure grid_figure() {
  Figure figure;
  figure.title = "Malleability study";
  figure.columns = 2;
  const std::vector<std::string> metrics = {"Makespan (s)", "Utilisation", "Average wait (s)",
                                            "Average response (s)"};
  const std::vector<std::string> policies = {"EASY backfill", "Equipartition", "Perf-aware"};
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    Panel panel;
    panel.title = metrics[m];
    panel.x_label = "Malleable fraction";
    panel.y_label = metrics[m];
    panel.y_min = 0;
    for (std::size_t p = 0; p < policies.size(); ++p) {
      Series series{.name = policies[p], .points = {}};
      for (int i = 0; i <= 4; ++i) {
        const double fraction = i / 4.0;
        const double base = m == 1 ? 0.7 : 10000.0 / (m + 1);
        const double trend = m == 1 ? 0.05 * fraction * (p + 1) : -0.1 * base * fraction * p;
        series.points.emplace_back(fraction, base + trend + 37.0 * p * (m != 1));
      }
      panel.series.push_back(std::move(series));
    }
    figure.panels.push_back(std::move(panel));
  }
  return figure;
}

// The paper-2 figure: cluster power with a moving corridor, step lines.
Figure power_figure() {
  Figure figure;
  figure.title = "Cluster power under a corridor";
  figure.panel_width = 900;
  figure.panel_height = 320;
  Panel panel;
  panel.title = "Power";
  panel.x_label = "Time (min)";
  panel.y_label = "Power (W)";
  panel.y_min = 0;
  panel.band =
      Band{{{0, 8000, 12000}, {60, 5000, 9000}, {120, 7000, 11871}}, "Corridor [lower, upper]"};
  const std::vector<std::string> scenarios = {"Rigid", "Malleable", "Malleable + corridor"};
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    Series series{.name = scenarios[s], .points = {}, .step = true, .markers = false};
    for (int minute = 0; minute <= 180; minute += 10) {
      const double corridor_pull = s == 2 ? (minute >= 60 && minute < 120 ? -2500 : 0) : 0;
      series.points.emplace_back(
          minute, 9000 + 1500 * std::sin(minute / 25.0 + s) + corridor_pull + 300.0 * s);
    }
    panel.series.push_back(std::move(series));
  }
  figure.panels.push_back(std::move(panel));
  return figure;
}

TEST(SvgTicks, KnownRangeGetsRoundSteps) {
  EXPECT_EQ(nice_ticks(0, 11871), (std::vector<double>{0, 2000, 4000, 6000, 8000, 10000, 12000}));
  EXPECT_EQ(nice_ticks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(-3, 7), (std::vector<double>{-4, -2, 0, 2, 4, 6, 8}));
}

TEST(SvgTicks, DecimalTicksAreTheNearestDoubles) {
  // 0.6 and not 0.6000000000000001: ticks are k × 2 / 10, not k × 0.2.
  EXPECT_EQ(nice_ticks(0, 1), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
  EXPECT_EQ(nice_ticks(0.3, 0.7), (std::vector<double>{0.3, 0.4, 0.5, 0.6, 0.7}));
}

TEST(SvgTicks, CoverTheRangeWithEvenSteps) {
  const std::vector<std::pair<double, double>> ranges = {
      {0, 1}, {0, 11871}, {-0.004, 0.013}, {86400, 90000}, {1e-9, 3e-9}, {-5e6, 2e7}, {0.5, 0.51}};
  for (const auto& [lo, hi] : ranges) {
    const auto ticks = nice_ticks(lo, hi);
    ASSERT_GE(ticks.size(), 3u) << lo << ".." << hi;
    EXPECT_LE(ticks.size(), 12u) << lo << ".." << hi;
    EXPECT_LE(ticks.front(), lo);
    EXPECT_GE(ticks.back(), hi);
    const double step = ticks[1] - ticks[0];
    for (std::size_t i = 1; i < ticks.size(); ++i)
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-6) << lo << ".." << hi;
  }
}

TEST(SvgTicks, OddInputs) {
  EXPECT_EQ(nice_ticks(1, 0), nice_ticks(0, 1));
  const auto constant = nice_ticks(5, 5);
  ASSERT_GE(constant.size(), 2u);
  EXPECT_LT(constant.front(), 5);
  EXPECT_GT(constant.back(), 5);
  EXPECT_FALSE(nice_ticks(0, 0).empty());
  EXPECT_TRUE(nice_ticks(kNaN, 1).empty());
  EXPECT_TRUE(nice_ticks(0, kInf).empty());
  EXPECT_FALSE(nice_ticks(0, 10, 0).empty());
  EXPECT_FALSE(nice_ticks(-1e308, 1e308).empty());
}

TEST(SvgTicks, LabelsAreCompact) {
  EXPECT_EQ(format_tick(12000, 2000), "12000");
  EXPECT_EQ(format_tick(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(format_tick(1, 0.2), "1");
  EXPECT_EQ(format_tick(0.75, 0.25), "0.75");
  EXPECT_EQ(format_tick(-0.0, 1), "0");
  EXPECT_EQ(format_tick(-2.5, 0.5), "-2.5");
  EXPECT_EQ(format_tick(1.5e9, 5e8), "1.5e9");
  EXPECT_EQ(format_tick(2e-7, 1e-7), "2e-7");
}

TEST(SvgPlot, IsStandaloneWellFormedSvg) {
  const std::string svg = render_svg(grid_figure());
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(finite_geometry(svg));
  const auto root = start_tags(svg, "svg");
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(attribute(root[0], "xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(attribute(root[0], "width"), "840");   // 2 columns × 420
  EXPECT_EQ(attribute(root[0], "height"), "632");  // title 32 + 2 rows × 300
  EXPECT_EQ(attribute(root[0], "viewBox"), "0 0 840 632");
  EXPECT_EQ(count(svg, "class=\"panel\""), 4u);
  EXPECT_NE(svg.find(">Malleability study</text>"), std::string::npos);
  EXPECT_NE(svg.find(">Malleable fraction</text>"), std::string::npos);
  EXPECT_NE(svg.find(">Utilisation</text>"), std::string::npos);
  // One legend label per policy in each panel.
  EXPECT_EQ(tags_with_class(svg, "text", "legend-label").size(), 12u);
}

TEST(SvgPlot, OneLinePerNonEmptySeriesAndOneMarkerPerFinitePoint) {
  const Figure figure = one_panel({
      Series{.name = "three", .points = {{0, 1}, {1, 2}, {2, 3}}},
      Series{.name = "empty", .points = {}},
      Series{.name = "all nan", .points = {{kNaN, 1}, {2, kNaN}}},
      Series{.name = "no markers", .points = {{0, 3}, {2, 1}}, .markers = false},
      Series{.name = "single", .points = {{1, 1.5}}},
  });
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(finite_geometry(svg));
  EXPECT_EQ(start_tags(svg, "polyline").size(), 3u);
  EXPECT_EQ(tags_with_class(svg, "circle", "marker").size(), 4u);  // 3 + 0 + 1
}

TEST(SvgPlot, SeriesAreDistinctColours) {
  const Figure figure = one_panel({Series{.name = "a", .points = {{0, 1}, {1, 2}}},
                                   Series{.name = "b", .points = {{0, 2}, {1, 1}}},
                                   Series{.name = "c", .points = {{0, 0}, {1, 3}}}});
  const auto lines = start_tags(render_svg(figure), "polyline");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(attribute(lines[0], "stroke"), attribute(lines[1], "stroke"));
  EXPECT_NE(attribute(lines[1], "stroke"), attribute(lines[2], "stroke"));
  EXPECT_NE(attribute(lines[0], "stroke"), attribute(lines[2], "stroke"));
}

TEST(SvgPlot, EscapesAllText) {
  Figure figure = one_panel({Series{.name = "a<b & c", .points = {{0, 1}, {1, 2}}}});
  figure.title = "say \"hi\" > 'there'";
  figure.panels[0].x_label = "x & y";
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find(">a&lt;b &amp; c</text>"), std::string::npos);
  EXPECT_NE(svg.find("data-name=\"a&lt;b &amp; c\""), std::string::npos);
  EXPECT_NE(svg.find("say &quot;hi&quot; &gt; &apos;there&apos;"), std::string::npos);
  EXPECT_NE(svg.find(">x &amp; y</text>"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(SvgPlot, ControlCharactersAndBadUtf8StayWellFormed) {
  const Figure figure = one_panel({Series{.name = std::string("bell\a \xff\xfe bad, \xc3\xa9 ok"),
                                          .points = {{0, 1}, {1, 2}}}});
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(svg.find('\a'), std::string::npos);
  EXPECT_EQ(svg.find('\xff'), std::string::npos);
  EXPECT_NE(svg.find("\xc3\xa9 ok"), std::string::npos);  // valid UTF-8 is kept
}

TEST(SvgPlot, StepSeriesIsHorizontalThenVertical) {
  const Figure figure = one_panel(
      {Series{.name = "power", .points = {{0, 1}, {1, 3}, {2, 2}, {4, 2.5}}, .step = true}});
  const auto lines = start_tags(render_svg(figure), "polyline");
  ASSERT_EQ(lines.size(), 1u);
  const auto points = polyline_points(lines[0]);
  ASSERT_EQ(points.size(), 7u);  // 4 data points + 3 corners
  for (std::size_t i = 1; i < points.size(); ++i) {
    const bool horizontal = i % 2 == 1;
    if (horizontal) {
      EXPECT_DOUBLE_EQ(points[i].second, points[i - 1].second) << "segment " << i;
      EXPECT_GT(points[i].first, points[i - 1].first) << "segment " << i;
    } else {
      EXPECT_DOUBLE_EQ(points[i].first, points[i - 1].first) << "segment " << i;
      EXPECT_NE(points[i].second, points[i - 1].second) << "segment " << i;
    }
  }
}

TEST(SvgPlot, LineSeriesJoinsThePointsDirectly) {
  const auto lines = start_tags(
      render_svg(one_panel({Series{.name = "s", .points = {{0, 1}, {1, 3}, {2, 2}}}})), "polyline");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(polyline_points(lines[0]).size(), 3u);
}

TEST(SvgPlot, BandIsOneRectPerSpanInXOrderBeneathTheLines) {
  Figure figure = one_panel({Series{.name = "power", .points = {{0, 1}, {40, 3}}}});
  // Given out of order: drawn as 0..10 at [1, 2], 10..30 at [2, 4], 30..40 (axis end) at [0, 1].
  figure.panels[0].band = Band{{{30, 0, 1}, {0, 1, 2}, {10, 2, 4}}, "corridor"};
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(well_formed(svg));

  const auto frame = tags_with_class(svg, "rect", "frame");
  ASSERT_EQ(frame.size(), 1u);
  const double left = number(frame[0], "x");
  const double width = number(frame[0], "width");
  const double top = number(frame[0], "y");
  const double height = number(frame[0], "height");

  const auto rects = tags_with_class(svg, "rect", "band");
  ASSERT_EQ(rects.size(), 3u);
  // The x axis runs 0..40 across the frame; spans map linearly onto it.
  const double expected_from[] = {0, 10, 30}, expected_to[] = {10, 30, 40};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(number(rects[i], "x"), left + expected_from[i] / 40 * width, 0.01) << i;
    EXPECT_NEAR(number(rects[i], "x") + number(rects[i], "width"),
                left + expected_to[i] / 40 * width, 0.02)
        << i;
    EXPECT_GE(number(rects[i], "y"), top - 0.01);
    EXPECT_LE(number(rects[i], "y") + number(rects[i], "height"), top + height + 0.01);
  }
  // Span 2 ([2, 4]) sits higher and is taller than span 1 ([1, 2]); y grows downwards.
  EXPECT_LT(number(rects[1], "y"), number(rects[0], "y"));
  EXPECT_GT(number(rects[1], "height"), number(rects[0], "height"));
  // Beneath the lines: drawn first.
  EXPECT_LT(svg.find("class=\"band\""), svg.find("<polyline"));
  EXPECT_EQ(tags_with_class(svg, "rect", "legend-band").size(), 1u);
  EXPECT_NE(svg.find(">corridor</text>"), std::string::npos);
}

TEST(SvgPlot, NonFinitePointsAreSkipped) {
  const Figure figure = one_panel(
      {Series{.name = "gaps", .points = {{0, 1}, {kNaN, 2}, {1, kInf}, {-kInf, 0}, {2, 3}}}});
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(finite_geometry(svg));
  const auto lines = start_tags(svg, "polyline");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(polyline_points(lines[0]).size(), 2u);
  EXPECT_EQ(tags_with_class(svg, "circle", "marker").size(), 2u);
  // The skipped values do not stretch the axes either: x ticks stop at 2.
  const auto x_labels = tags_with_class(svg, "text", "tick-label x");
  ASSERT_FALSE(x_labels.empty());
  EXPECT_NE(svg.find(">2</text>"), std::string::npos);
}

TEST(SvgPlot, ConstantSeriesHasFiniteCoordinatesInsideThePlot) {
  const std::string svg =
      render_svg(one_panel({Series{.name = "flat", .points = {{0, 5}, {1, 5}, {2, 5}}}}));
  EXPECT_TRUE(finite_geometry(svg));
  const auto frame = tags_with_class(svg, "rect", "frame");
  ASSERT_EQ(frame.size(), 1u);
  const auto points = polyline_points(start_tags(svg, "polyline").at(0));
  ASSERT_EQ(points.size(), 3u);
  for (const auto& [x, y] : points) {
    EXPECT_DOUBLE_EQ(y, points[0].second);
    EXPECT_GT(y, number(frame[0], "y"));
    EXPECT_LT(y, number(frame[0], "y") + number(frame[0], "height"));
  }
}

TEST(SvgPlot, ForcedAxisStartIsTheBottomOfThePlot) {
  Figure figure = one_panel({Series{.name = "makespan", .points = {{0, 10000}, {1, 11871}}}});
  figure.panels[0].y_min = 0;
  const std::string svg = render_svg(figure);
  const auto frame = tags_with_class(svg, "rect", "frame");
  ASSERT_EQ(frame.size(), 1u);
  const double bottom = number(frame[0], "y") + number(frame[0], "height");
  std::vector<std::string> labels;
  double zero_y = -1;
  for (const auto& tag : tags_with_class(svg, "text", "tick-label y")) {
    const auto at = svg.find(tag) + tag.size();
    labels.push_back(svg.substr(at, svg.find('<', at) - at));
    if (labels.back() == "0") zero_y = number(tag, "y");
  }
  EXPECT_EQ(labels,
            (std::vector<std::string>{"0", "2000", "4000", "6000", "8000", "10000", "12000"}));
  EXPECT_NEAR(zero_y, bottom + 3.5, 0.01);  // the label's baseline sits just under its tick
}

TEST(SvgPlot, EdgeCasesRenderWithoutNaN) {
  std::vector<Figure> figures;
  figures.push_back(Figure{});       // no panels at all
  figures.push_back(one_panel({}));  // a panel without series
  figures.push_back(one_panel({Series{.name = "one", .points = {{3, 4}}}}));
  figures.push_back(one_panel({Series{.name = "zero", .points = {{0, 0}, {0, 0}}}}));
  figures.push_back(
      one_panel({Series{.name = "huge", .points = {{-1e308, -1e308}, {1e308, 1e308}}}}));
  figures.push_back(one_panel({Series{.name = "tiny", .points = {{0, 5e-324}, {1, 5e-324}}}}));
  Figure forced = one_panel({Series{.name = "s", .points = {{0, -5}, {1, -1}}}});
  forced.panels[0].y_min = 0;     // data entirely below the forced start
  forced.panels[0].y_max = kNaN;  // ignored
  figures.push_back(forced);
  Figure inverted = one_panel({Series{.name = "s", .points = {{0, 1}, {1, 2}}}});
  inverted.panels[0].y_min = 10;
  inverted.panels[0].y_max = 0;
  figures.push_back(inverted);
  Figure odd_layout = grid_figure();
  odd_layout.columns = -3;
  odd_layout.panel_width = kNaN;
  odd_layout.panel_height = -50;
  figures.push_back(odd_layout);
  Figure bad_band = one_panel({Series{.name = "s", .points = {{0, 1}, {10, 2}}}});
  // NaN: skipped; the first span at 5 is replaced by the second; lo > hi is fine.
  bad_band.panels[0].band = Band{{{kNaN, 0, 1}, {5, 0, 1}, {3, 2, 0}, {5, 1, 2}}, ""};
  figures.push_back(bad_band);

  for (std::size_t i = 0; i < figures.size(); ++i) {
    const std::string svg = render_svg(figures[i]);
    EXPECT_TRUE(well_formed(svg)) << "figure " << i;
    EXPECT_TRUE(finite_geometry(svg)) << "figure " << i;
  }
  const auto band_rects = tags_with_class(render_svg(bad_band), "rect", "band");
  ASSERT_EQ(band_rects.size(), 2u);  // 3..5 at [0, 2] and 5..10 at [1, 2]
  EXPECT_GT(number(band_rects[0], "height"), number(band_rects[1], "height"));
}

TEST(SvgPlot, WriteSvgWritesTheRenderedDocument) {
  const auto path = std::filesystem::temp_directory_path() / "sched_test_svg_plot.svg";
  const Figure figure = power_figure();
  write_svg(path.string(), figure);
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, render_svg(figure));
  std::filesystem::remove(path);
}

TEST(SvgPlot, WriteSvgToAnUnwritablePathNamesThePath) {
  const std::string path = "/nonexistent-sched-dir/sub/figure.svg";
  try {
    write_svg(path, grid_figure());
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
}

// The text of each `<text class="css_class" ...>` element, in order.
std::vector<std::string> texts_with_class(const std::string& svg, const std::string& css_class) {
  std::vector<std::string> texts;
  for (const auto& tag : tags_with_class(svg, "text", css_class)) {
    const auto at = svg.find(tag) + tag.size();
    texts.push_back(svg.substr(at, svg.find('<', at) - at));
  }
  return texts;
}

// The `<g class="bar" ...>` elements, each with its content.
std::vector<std::string> bar_groups(const std::string& svg) {
  std::vector<std::string> bars;
  const std::string open = "<g class=\"bar\"";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1))
    bars.push_back(svg.substr(at, svg.find("</g>", at) - at));
  return bars;
}

Figure gantt_figure() {
  Figure figure;
  Panel panel;
  panel.title = "jobs";
  panel.x_label = "time (s)";
  panel.y_label = "lane";
  panel.bar_groups = {"rigid job", "malleable job"};
  panel.bars = {
      Bar{.row = 0, .segments = {{0, 10, 4}}, .group = 0, .tooltip = "job 1"},
      // Resized 2 -> 8 -> 4 nodes.
      Bar{.row = 1, .segments = {{2, 5, 2}, {5, 9, 8}, {9, 12, 4}}, .group = 1, .tooltip = "job 2"},
      Bar{.row = 0, .segments = {{10, 14, 1}}, .group = 0, .tooltip = "job <3>"},
  };
  panel.series = {Series{.name = "level", .points = {{0, 1}, {14, 1}}, .markers = false}};
  figure.panels.push_back(std::move(panel));
  return figure;
}

TEST(SvgGantt, OneGroupPerBarWithOneRectPerSegment) {
  const std::string svg = render_svg(gantt_figure());
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(finite_geometry(svg));
  const auto bars = bar_groups(svg);
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(count(bars[0], "<rect "), 1u);
  EXPECT_EQ(count(bars[1], "<rect "), 3u);
  EXPECT_NE(bars[0].find("<title>job 1</title>"), std::string::npos);
  EXPECT_NE(bars[2].find("<title>job &lt;3&gt;</title>"), std::string::npos);
  // Colour by group: the two rigid jobs alike, the malleable one not.
  EXPECT_EQ(attribute(bars[0], "fill"), attribute(bars[2], "fill"));
  EXPECT_NE(attribute(bars[0], "fill"), attribute(bars[1], "fill"));
  // Beneath the lines.
  EXPECT_LT(svg.find("<g class=\"bar\""), svg.find("<polyline"));
}

TEST(SvgGantt, SegmentsAreAsThickAsTheirSizeAndFollowTheTimeAxis) {
  const std::string svg = render_svg(gantt_figure());
  const auto bars = bar_groups(svg);
  ASSERT_EQ(bars.size(), 3u);
  const auto segments = start_tags(bars[1], "rect");
  ASSERT_EQ(segments.size(), 3u);
  // 2, 8 and 4 nodes of a full 8: heights 1 : 4 : 2, centred on one row.
  const double h2 = number(segments[0], "height"), h8 = number(segments[1], "height"),
               h4 = number(segments[2], "height");
  EXPECT_NEAR(h8 / h2, 4, 0.01);  // pixels are rounded to 0.01
  EXPECT_NEAR(h4 / h2, 2, 0.01);
  EXPECT_NEAR(number(segments[0], "y") + h2 / 2, number(segments[1], "y") + h8 / 2, 0.01);
  // Consecutive in time: each starts where the previous one ended.
  for (std::size_t i = 1; i < segments.size(); ++i) {
    EXPECT_NEAR(number(segments[i], "x"),
                number(segments[i - 1], "x") + number(segments[i - 1], "width"), 0.02);
  }
  // Rows: job 2 (row 1) above job 1 (row 0).
  const auto job1 = start_tags(bars[0], "rect");
  EXPECT_LT(number(segments[0], "y") + h2 / 2,
            number(job1[0], "y") + number(job1[0], "height") / 2);
}

TEST(SvgGantt, LegendNamesEveryGroupAndSeriesAndTheAxesAreLabelled) {
  const std::string svg = render_svg(gantt_figure());
  EXPECT_EQ(texts_with_class(svg, "legend-label"),
            (std::vector<std::string>{"rigid job", "malleable job", "level"}));
  EXPECT_EQ(tags_with_class(svg, "rect", "legend-bar").size(), 2u);
  EXPECT_EQ(texts_with_class(svg, "axis-label"), (std::vector<std::string>{"time (s)", "lane"}));
}

TEST(SvgPlot, LogAxisShowsValuesFarApart) {
  Figure figure = one_panel({
      Series{.name = "ours", .points = {{1, 0.005}, {2, 0.01}, {3, 0.02}, {4, 0}, {5, -1}}},
      Series{.name = "paper", .points = {{1, 3.1}, {5, 3.1}}, .markers = false},
  });
  figure.panels[0].log_y = true;
  figure.panels[0].y_min = 0;  // not positive: ignored on a log axis
  const std::string svg = render_svg(figure);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_TRUE(finite_geometry(svg));
  EXPECT_EQ(texts_with_class(svg, "tick-label y"),
            (std::vector<std::string>{"0.001", "0.01", "0.1", "1", "10"}));
  // Zero and negative values have no place on the axis: 3 markers, not 5.
  EXPECT_EQ(tags_with_class(svg, "circle", "marker").size(), 3u);
  // Each doubling is the same distance up, a quarter of the plot per decade
  // give or take: ours are far from squashed on the floor.
  const auto markers = tags_with_class(svg, "circle", "marker");
  const double step1 = number(markers[0], "cy") - number(markers[1], "cy");
  const double step2 = number(markers[1], "cy") - number(markers[2], "cy");
  EXPECT_NEAR(step1, step2, 0.02);
  const auto frame = tags_with_class(svg, "rect", "frame");
  ASSERT_EQ(frame.size(), 1u);
  EXPECT_NEAR(step1, number(frame[0], "height") / 4 * std::log10(2.0), 0.05);
}

TEST(SvgPlot, LogAxisWithinAFewDecadesHasTicksAtOneTwoFive) {
  Figure figure = one_panel({Series{.name = "s", .points = {{0, 1.5}, {1, 70}}}});
  figure.panels[0].log_y = true;
  EXPECT_EQ(texts_with_class(render_svg(figure), "tick-label y"),
            (std::vector<std::string>{"1", "2", "5", "10", "20", "50", "100"}));
}

TEST(SvgPlot, LayersDrawBeneathWhileTheLegendKeepsItsOrderAndStylesOverride) {
  Figure figure = one_panel({
      Series{.name = "first", .points = {{0, 1}, {1, 2}}},
      Series{.name = "beneath",
             .points = {{0, 1}, {1, 2}},
             .colour = "#123456",
             .dash = "7 4",
             .layer = -1},
  });
  const std::string svg = render_svg(figure);
  const auto lines = start_tags(svg, "polyline");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(attribute(lines[0], "stroke"), "#123456");
  EXPECT_EQ(attribute(lines[0], "stroke-dasharray"), "7 4");
  EXPECT_EQ(attribute(lines[1], "stroke-dasharray"), "");
  EXPECT_EQ(texts_with_class(svg, "legend-label"), (std::vector<std::string>{"first", "beneath"}));
  // The legend shows the overriding style too.
  EXPECT_NE(svg.find("stroke=\"#123456\" stroke-dasharray=\"7 4\"/>"), std::string::npos);
}

TEST(SvgPlot, DenseLinesAreThinnedToTheSameShape) {
  Series dense{.name = "busy", .points = {}, .step = true, .markers = false};
  // 100,000 steps between 0 and 100, with one spike to 250 and a dip to -20.
  for (int i = 0; i < 100000; ++i) {
    const double y = i == 31337 ? 250 : i == 77777 ? -20 : (i * 7919) % 101;
    dense.points.emplace_back(i, y);
  }
  Series sparse = dense;
  sparse.points.resize(50);
  const std::string svg = render_svg(one_panel({dense}));
  EXPECT_LT(svg.size(), 200000u);
  const auto points = polyline_points(start_tags(svg, "polyline").at(0));
  const auto frame = tags_with_class(svg, "rect", "frame");
  ASSERT_EQ(frame.size(), 1u);
  EXPECT_LE(points.size(), 4 * (number(frame[0], "width") + 2));
  // The spike and the dip survive: the drawn extremes are at 250 and -20,
  // read off the y axis through two of its ticks.
  double top = points[0].second, bottom = points[0].second;
  for (const auto& [x, y] : points) {
    top = std::min(top, y);
    bottom = std::max(bottom, y);
  }
  const auto tick_tags = tags_with_class(svg, "text", "tick-label y");
  const auto tick_texts = texts_with_class(svg, "tick-label y");
  ASSERT_GE(tick_tags.size(), 2u);
  const double v0 = std::stod(tick_texts.front()), v1 = std::stod(tick_texts.back());
  const double p0 = number(tick_tags.front(), "y"), p1 = number(tick_tags.back(), "y");
  const auto value_at = [&](double pixel) { return v0 + (pixel - p0) / (p1 - p0) * (v1 - v0); };
  const double label_offset = 3.5;  // a label's baseline sits this far below its tick
  EXPECT_NEAR(value_at(top + label_offset), 250, 0.5);
  EXPECT_NEAR(value_at(bottom + label_offset), -20, 0.5);
  // First and last points stay where they were.
  EXPECT_NEAR(points.front().first, number(frame[0], "x"), 0.01);
  EXPECT_NEAR(points.back().first, number(frame[0], "x") + number(frame[0], "width"), 0.01);
  // A short line is left alone.
  const auto few = polyline_points(start_tags(render_svg(one_panel({sparse})), "polyline").at(0));
  EXPECT_EQ(few.size(), 2 * 50u - 1);
}

}  // namespace
}  // namespace sched::plot
