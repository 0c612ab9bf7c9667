#include "sched/plot/svg_plot.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "sched/plot/text_buffer.hpp"

namespace sched::plot {
namespace {

// Okabe–Ito colours: distinguishable under the common colour-vision
// deficiencies. Its yellow is left out, too faint on white.
constexpr std::array<const char*, 7> kPalette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#000000"};
// Once the palette is used up, later series repeat colours with a dash.
constexpr std::array<const char*, 3> kDashes = {"", "6 3", "2 2"};
constexpr const char* kBandColour = "#7f7f7f";

constexpr double kDefaultPanelWidth = 420;
constexpr double kDefaultPanelHeight = 300;
constexpr double kMinSize = 100;
constexpr double kMaxSize = 100000;

constexpr double kTickFont = 10;
constexpr double kLabelFont = 12;
constexpr double kLegendFont = 11;
constexpr double kRowHeight = 16;  // one line of tick labels, axis label or legend
constexpr double kMarkerRadius = 3;

bool finite(double value) { return std::isfinite(value); }

// Scientific text with `digits` significant digits, shortened: 1.5e9, 2e-7.
std::string compact_scientific(double value, int digits) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value,
                                          std::chars_format::scientific, digits - 1);
  if (error != std::errc{}) return "0";
  const std::string text(buffer, end);
  const auto e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    mantissa.erase(mantissa.find_last_not_of('0') + 1);
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + "e" + std::to_string(std::atoi(text.c_str() + e + 1));
}

// A pixel coordinate (2 decimals at most); callers pass only finite values.
std::string px(double value) { return fixed_text(value, 2); }
void append_px(TextBuffer& out, double value) { out.append_fixed(value, 2); }

// Appends `bytes` as XML character data or attribute text: escapes the
// special characters, drops control characters XML 1.0 forbids and
// replaces invalid UTF-8 with U+FFFD, so any name yields a well-formed file.
// The bytes that go into XML as they are: printable ASCII but & < > " '.
constexpr auto kPlainByte = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte < 0x80; ++byte) plain[byte] = true;
  for (const char special : {'&', '<', '>', '"', '\''})
    plain[static_cast<unsigned char>(special)] = false;
  return plain;
}();

void append_escaped(TextBuffer& out, std::string_view bytes) {
  const auto plain = [](char c) { return kPlainByte[static_cast<unsigned char>(c)]; };
  std::size_t i = 0;
  while (i < bytes.size()) {
    // A run of bytes that need nothing (most text) goes in at once.
    std::size_t run = i;
    while (run < bytes.size() && plain(bytes[run])) ++run;
    if (run > i) {
      out.append(bytes.substr(i, run - i));
      i = run;
      continue;
    }
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if (byte < 0x80) {
      switch (byte) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          if (byte >= 0x20 || byte == '\t' || byte == '\n' || byte == '\r') out += bytes[i];
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: length from the lead byte, then the range of
    // its second byte (excluding overlong forms, surrogates, > U+10FFFF).
    std::size_t length = 0;
    unsigned char second_min = 0x80, second_max = 0xBF;
    if (byte >= 0xC2 && byte <= 0xDF) {
      length = 2;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      length = 3;
      if (byte == 0xE0) second_min = 0xA0;
      if (byte == 0xED) second_max = 0x9F;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      length = 4;
      if (byte == 0xF0) second_min = 0x90;
      if (byte == 0xF4) second_max = 0x8F;
    }
    bool valid = length > 0 && i + length <= bytes.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      valid = k == 1 ? next >= second_min && next <= second_max : next >= 0x80 && next <= 0xBF;
    }
    if (valid) {
      out.append(bytes.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
}

std::string escaped(std::string_view text) {
  TextBuffer out;
  append_escaped(out, text);
  return out.take();
}

// Rough rendered width of `text` for layout: code points × an average
// glyph width of a sans-serif font.
double text_width(std::string_view text, double font_size) {
  const auto code_points = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
  return static_cast<double>(code_points) * font_size * 0.6;
}

// mantissa × 10^exponent, divided for negative exponents so that e.g.
// 3 × 10^-1 is the double nearest 0.3 rather than 0.30000000000000004.
double scaled(double mantissa, int exponent) {
  return exponent >= 0 ? mantissa * std::pow(10.0, exponent) : mantissa / std::pow(10.0, -exponent);
}

// The smallest non-negative range at `value`, |value| / 10 or 1 for tiny values.
double margin_at(double value) {
  const double margin = std::abs(value) * 0.1;
  return margin > std::numeric_limits<double>::min() ? margin : 1.0;
}

// Makes lo < hi. An inverted range with neither or both ends fixed is
// swapped; a degenerate one grows by a margin on the ends not fixed (both
// when both are), moving to the other side should that overflow.
void ensure_span(double& lo, double& hi, bool fixed_lo, bool fixed_hi) {
  if (lo > hi && fixed_lo == fixed_hi) std::swap(lo, hi);
  if (hi > lo) return;
  const double anchor = fixed_lo && !fixed_hi ? lo : hi;
  const double margin = margin_at(anchor);
  const bool both = fixed_lo == fixed_hi;
  double new_lo = anchor - (both || fixed_hi ? margin : 0);
  double new_hi = anchor + (both || fixed_lo ? margin : 0);
  if (!finite(new_lo)) {
    new_lo = anchor;
    new_hi = anchor + margin;
  } else if (!finite(new_hi)) {
    new_hi = anchor;
    new_lo = anchor - margin;
  }
  lo = new_lo;
  hi = new_hi;
}

// The finite extent of a set of values.
struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double value) {
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  }
  bool empty() const { return lo > hi; }
};

struct Axis {
  double lo = 0;
  double hi = 1;
  std::vector<double> ticks;  // within [lo, hi]
  std::vector<std::string> labels;
};

// Keeps the ticks inside [axis.lo, axis.hi] and labels them.
void set_ticks(Axis& axis, const std::vector<double>& ticks) {
  const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : axis.hi - axis.lo;
  const double slack = 1e-9 * (axis.hi * 0.5 - axis.lo * 0.5);
  for (double tick : ticks) {
    if (tick < axis.lo - slack || tick > axis.hi + slack) continue;
    axis.ticks.push_back(tick);
    axis.labels.push_back(format_tick(tick, step));
  }
}

// The x axis hugs the data, so time axes do not end in empty space.
Axis tight_axis(const Extent& extent, int target) {
  Axis axis;
  if (!extent.empty()) {
    axis.lo = extent.lo;
    axis.hi = extent.hi;
  }
  ensure_span(axis.lo, axis.hi, false, false);
  set_ticks(axis, nice_ticks(axis.lo, axis.hi, target));
  return axis;
}

// The y axis runs from tick to tick unless an end is forced.
Axis value_axis(const Extent& extent, std::optional<double> forced_min,
                std::optional<double> forced_max, int target) {
  const bool fixed_lo = forced_min && finite(*forced_min);
  const bool fixed_hi = forced_max && finite(*forced_max);
  Axis axis;
  if (!extent.empty()) {
    axis.lo = extent.lo;
    axis.hi = extent.hi;
  }
  if (fixed_lo) axis.lo = *forced_min;
  if (fixed_hi) axis.hi = *forced_max;
  ensure_span(axis.lo, axis.hi, fixed_lo, fixed_hi);
  const auto ticks = nice_ticks(axis.lo, axis.hi, target);
  if (!ticks.empty()) {
    if (!fixed_lo) axis.lo = std::min(axis.lo, ticks.front());
    if (!fixed_hi) axis.hi = std::max(axis.hi, ticks.back());
  }
  set_ticks(axis, ticks);
  return axis;
}

// A logarithmic axis over log10 values: decades, with 2 and 5 between them
// when the axis spans at most 3 decades; labelled with the values.
Axis log_axis(const Extent& extent, std::optional<double> forced_min,
              std::optional<double> forced_max) {
  const bool fixed_lo = forced_min && finite(*forced_min);
  const bool fixed_hi = forced_max && finite(*forced_max);
  Axis axis;
  if (!extent.empty()) {
    axis.lo = extent.lo;
    axis.hi = extent.hi;
  }
  if (fixed_lo) axis.lo = *forced_min;
  if (fixed_hi) axis.hi = *forced_max;
  ensure_span(axis.lo, axis.hi, fixed_lo, fixed_hi);
  // Out to whole decades, unless an end is forced.
  if (!fixed_lo) axis.lo = std::floor(axis.lo + 1e-9);
  if (!fixed_hi) axis.hi = std::ceil(axis.hi - 1e-9);
  if (!(axis.hi > axis.lo)) axis.hi = axis.lo + 1;
  // Beyond the range of doubles there is nothing to label.
  axis.lo = std::max(axis.lo, -320.0);
  axis.hi = std::min(axis.hi, 320.0);
  if (!(axis.hi > axis.lo)) axis.lo = axis.hi - 1;
  const bool fine = axis.hi - axis.lo <= 3;
  const double slack = 1e-9 * (axis.hi - axis.lo);
  for (double decade = std::floor(axis.lo); decade <= std::ceil(axis.hi); ++decade) {
    for (int mantissa : {1, 2, 5}) {
      if (mantissa != 1 && !fine) continue;
      const double tick = decade + std::log10(static_cast<double>(mantissa));
      if (tick < axis.lo - slack || tick > axis.hi + slack) continue;
      const int exponent = static_cast<int>(decade);
      axis.ticks.push_back(tick);
      axis.labels.push_back(format_tick(scaled(mantissa, exponent), scaled(1, exponent)));
    }
  }
  return axis;
}

// The panel with its values as log10 (non-positive ones become NaN, which
// every drawing step skips).
Panel log_values(const Panel& panel) {
  const auto log_of = [](double value) {
    return value > 0 ? std::log10(value) : std::numeric_limits<double>::quiet_NaN();
  };
  Panel out = panel;
  for (auto& series : out.series)
    for (auto& point : series.points) point.second = log_of(point.second);
  if (out.band)
    for (auto& [from, lo, hi] : out.band->spans) {
      lo = log_of(lo);
      hi = log_of(hi);
    }
  if (out.y_min) out.y_min = log_of(*out.y_min);
  if (out.y_max) out.y_max = log_of(*out.y_max);
  return out;
}

// Data to pixel coordinates of a panel's plot area.
struct Frame {
  double left = 0, top = 0, width = 0, height = 0;
  Axis x, y;

  // Halved operands keep the differences of huge values from overflowing.
  double map_x(double value) const {
    return left + (value * 0.5 - x.lo * 0.5) / (x.hi * 0.5 - x.lo * 0.5) * width;
  }
  double map_y(double value) const {
    return top + height - (value * 0.5 - y.lo * 0.5) / (y.hi * 0.5 - y.lo * 0.5) * height;
  }
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

enum class Swatch { Line, Band, Bar };

struct LegendEntry {
  std::string name;
  std::string colour;
  std::string dash;
  bool markers;
  Swatch swatch;
  double x;  // offset from the legend's left edge
  int row;
};

std::string series_colour(const Series& series, std::size_t index) {
  return series.colour.empty() ? kPalette[index % kPalette.size()] : series.colour;
}

std::string series_dash(const Series& series, std::size_t index) {
  return series.dash.empty() ? kDashes[(index / kPalette.size()) % kDashes.size()] : series.dash;
}

const char* bar_colour(std::size_t group) { return kPalette[group % kPalette.size()]; }

// Elements written straight into one buffer, coordinates included.
class Writer {
 public:
  TextBuffer out;

  void text(double x, double y, std::string_view content, std::string_view attributes) {
    coordinate("<text x=\"", x);
    coordinate("\" y=\"", y);
    out += "\" ";
    out += attributes;
    out += '>';
    append_escaped(out, content);
    out += "</text>\n";
  }

  void line(double x1, double y1, double x2, double y2, std::string_view attributes) {
    coordinate("<line x1=\"", x1);
    coordinate("\" y1=\"", y1);
    coordinate("\" x2=\"", x2);
    coordinate("\" y2=\"", y2);
    out += "\" ";
    out += attributes;
    out += "/>\n";
  }

  void rect(double x, double y, double width, double height, std::string_view attributes) {
    coordinate("<rect x=\"", x);
    coordinate("\" y=\"", y);
    coordinate("\" width=\"", width);
    coordinate("\" height=\"", height);
    out += "\" ";
    out += attributes;
    out += "/>\n";
  }

  void circle(double x, double y, std::string_view attributes) {
    coordinate("<circle cx=\"", x);
    coordinate("\" cy=\"", y);
    coordinate("\" r=\"", kMarkerRadius);
    out += "\" ";
    out += attributes;
    out += "/>\n";
  }

 private:
  // `before`, then the coordinate.
  void coordinate(std::string_view before, double value) {
    out += before;
    append_px(out, value);
  }
};

std::string stroke_style(const std::string& colour, const std::string& dash) {
  std::string style = "stroke=\"" + escaped(colour) + "\"";
  if (!dash.empty()) style += " stroke-dasharray=\"" + escaped(dash) + "\"";
  return style;
}

// Keeps, of each run of vertices in one pixel column, the first, the
// lowest, the highest and the last, in their order: the same drawn shape.
std::vector<std::pair<double, double>> thinned(const std::vector<std::pair<double, double>>& in) {
  std::vector<std::pair<double, double>> out;
  std::size_t i = 0;
  while (i < in.size()) {
    const double column = std::floor(in[i].first), next = column + 1;
    // floor(x) == column without a call to floor, where column + 1 is exact.
    const auto in_column = [&](double x) {
      return next > column ? x >= column && x < next : std::floor(x) == column;
    };
    std::size_t end = i + 1, low = i, high = i;
    while (end < in.size() && in_column(in[end].first)) {
      if (in[end].second < in[low].second) low = end;
      if (in[end].second > in[high].second) high = end;
      ++end;
    }
    std::array<std::size_t, 4> keep = {i, std::min(low, high), std::max(low, high), end - 1};
    for (std::size_t k = 0; k < keep.size(); ++k)
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(in[keep[k]]);
    i = end;
  }
  return out;
}

// Finite spans in x order; a later span at the same x replaces an earlier
// one, as assigning into a map would.
std::vector<std::tuple<double, double, double>> ordered_spans(const Band& band) {
  std::vector<std::tuple<double, double, double>> spans;
  for (const auto& span : band.spans) {
    const auto& [from, lo, hi] = span;
    if (finite(from) && finite(lo) && finite(hi)) spans.push_back(span);
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  return spans;
}

void render_band(Writer& writer, const Frame& frame, const Band& band) {
  const auto spans = ordered_spans(band);
  // Clamped to the plot area: a band is context, never drawn over the axes.
  const auto clamp_x = [&](double v) { return std::clamp(v, frame.left, frame.right()); };
  const auto clamp_y = [&](double v) { return std::clamp(v, frame.top, frame.bottom()); };
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& [from, lo, hi] = spans[i];
    const double to = i + 1 < spans.size() ? std::get<0>(spans[i + 1]) : frame.x.hi;
    const double x1 = clamp_x(frame.map_x(from));
    const double x2 = clamp_x(frame.map_x(to));
    const double y1 = clamp_y(frame.map_y(std::max(lo, hi)));
    const double y2 = clamp_y(frame.map_y(std::min(lo, hi)));
    // Empty rects (a replaced span, one past the axis end) are left out.
    if (!finite(x1) || !finite(x2) || !finite(y1) || !finite(y2) || x2 <= x1 || y2 <= y1) continue;
    writer.rect(x1, y1, x2 - x1, y2 - y1,
                "class=\"band\" fill=\"" + std::string(kBandColour) +
                    "\" fill-opacity=\"0.25\" stroke=\"none\"");
  }
}

void render_series(Writer& writer, const Frame& frame, const Series& series, std::size_t index) {
  const std::string colour = series_colour(series, index);
  const std::string dash = series_dash(series, index);

  std::vector<std::pair<double, double>> mapped;
  mapped.reserve(series.points.size());
  for (const auto& [x, y] : series.points) {
    if (!finite(x) || !finite(y)) continue;
    const double mx = frame.map_x(x);
    const double my = frame.map_y(y);
    if (finite(mx) && finite(my)) mapped.emplace_back(mx, my);
  }
  if (mapped.empty()) return;

  // The polyline's vertices; a step holds the previous value up to the
  // next x, then jumps.
  std::vector<std::pair<double, double>> vertices;
  vertices.reserve(series.step ? 2 * mapped.size() : mapped.size());
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    if (series.step && i > 0) vertices.emplace_back(mapped[i].first, mapped[i - 1].second);
    vertices.push_back(mapped[i]);
  }
  if (!series.markers && static_cast<double>(vertices.size()) > 2 * frame.width)
    vertices = thinned(vertices);

  writer.out += "<g class=\"series\" data-name=\"" + escaped(series.name) + "\">\n";
  writer.out += "<polyline fill=\"none\" stroke-width=\"1.8\" stroke-linejoin=\"round\" " +
                stroke_style(colour, dash) + " points=\"";
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (i > 0) writer.out += ' ';
    append_px(writer.out, vertices[i].first);
    writer.out += ',';
    append_px(writer.out, vertices[i].second);
  }
  writer.out += "\"/>\n";
  if (series.markers) {
    const std::string style =
        "class=\"marker\" fill=\"" + escaped(colour) + "\" stroke=\"white\" stroke-width=\"0.8\"";
    for (const auto& [x, y] : mapped) writer.circle(x, y, style);
  }
  writer.out += "</g>\n";
}

// Lays the legend entries out in rows of at most `width` px.
std::vector<LegendEntry> legend_entries(const Panel& panel, double width) {
  std::vector<LegendEntry> entries;
  if (panel.band && !panel.band->name.empty())
    entries.push_back({panel.band->name, kBandColour, "", false, Swatch::Band, 0, 0});
  for (std::size_t g = 0; g < panel.bar_groups.size(); ++g) {
    if (panel.bar_groups[g].empty()) continue;
    entries.push_back({panel.bar_groups[g], bar_colour(g), "", false, Swatch::Bar, 0, 0});
  }
  for (std::size_t i = 0; i < panel.series.size(); ++i) {
    const Series& series = panel.series[i];
    if (series.name.empty()) continue;
    entries.push_back({series.name, series_colour(series, i), series_dash(series, i),
                       series.markers, Swatch::Line, 0, 0});
  }
  double x = 0;
  int row = 0;
  for (auto& entry : entries) {
    const double entry_width = 26 + text_width(entry.name, kLegendFont) + 14;
    if (x > 0 && x + entry_width > width) {
      x = 0;
      ++row;
    }
    entry.x = x;
    entry.row = row;
    x += entry_width;
  }
  return entries;
}

void render_bars(Writer& writer, const Frame& frame, const Panel& panel) {
  double full = panel.bar_full_size;
  if (!finite(full) || full <= 0) {
    full = 0;
    for (const auto& bar : panel.bars)
      for (const auto& segment : bar.segments)
        if (finite(segment.size)) full = std::max(full, segment.size);
  }
  if (full <= 0) full = 1;
  // A bit of space between neighbouring rows.
  const double row_px = std::abs(frame.map_y(1) - frame.map_y(0)) * 0.85;
  const double min_px = std::min(1.0, row_px);
  for (const auto& bar : panel.bars) {
    const double centre = frame.map_y(bar.row);
    if (!finite(centre) || !finite(row_px)) continue;
    writer.out += "<g class=\"bar\" fill=\"";
    writer.out += bar_colour(bar.group);
    writer.out += "\">";
    if (!bar.tooltip.empty()) {
      writer.out += "<title>";
      append_escaped(writer.out, bar.tooltip);
      writer.out += "</title>";
    }
    writer.out += '\n';
    for (const auto& segment : bar.segments) {
      double x1 = frame.map_x(segment.from);
      double x2 = frame.map_x(segment.to);
      if (!finite(x1) || !finite(x2) || !finite(segment.size)) continue;
      if (x2 < x1) std::swap(x1, x2);
      // Half a pixel at least, so that a short job in a long run shows.
      const double w = std::max(x2 - x1, 0.5);
      const double h = std::max(row_px * std::clamp(segment.size / full, 0.0, 1.0), min_px);
      writer.rect(x1, centre - h / 2, w, h, "");
    }
    writer.out += "</g>\n";
  }
}

void render_panel(Writer& writer, const Panel& given, std::size_t index, double origin_x,
                  double origin_y, double width, double height) {
  // A log axis plots log10 of the values; its ticks are labelled in values.
  std::optional<Panel> logged;
  if (given.log_y) logged = log_values(given);
  const Panel& panel = logged ? *logged : given;

  Extent x_extent, y_extent;
  for (const auto& bar : panel.bars) {
    if (!finite(bar.row)) continue;
    for (const auto& segment : bar.segments) {
      if (!finite(segment.from) || !finite(segment.to)) continue;
      x_extent.add(segment.from);
      x_extent.add(segment.to);
      y_extent.add(bar.row - 0.5);
      y_extent.add(bar.row + 0.5);
    }
  }
  for (const auto& series : panel.series) {
    for (const auto& [x, y] : series.points) {
      if (!finite(x) || !finite(y)) continue;
      x_extent.add(x);
      y_extent.add(y);
    }
  }
  if (panel.band) {
    for (const auto& [from, lo, hi] : ordered_spans(*panel.band)) {
      x_extent.add(from);
      y_extent.add(lo);
      y_extent.add(hi);
    }
  }

  // Margins from what sits around the plot area: title above; x tick
  // labels, x label and legend rows below; y label and y tick labels left.
  // Fewer ticks on a small plot, so that their labels do not collide.
  Frame frame;
  const auto legend = legend_entries(panel, width - 20);
  const int legend_rows = legend.empty() ? 0 : legend.back().row + 1;
  const double title_height = panel.title.empty() ? 12 : 28;
  const double below = kRowHeight + (panel.x_label.empty() ? 0 : kRowHeight) +
                       (legend_rows > 0 ? 6 + legend_rows * kRowHeight : 0) + 8;
  frame.top = origin_y + title_height;
  frame.height = std::max(height - title_height - below, 10.0);
  frame.y = panel.log_y ? log_axis(y_extent, panel.y_min, panel.y_max)
                        : value_axis(y_extent, panel.y_min, panel.y_max,
                                     std::clamp(static_cast<int>(frame.height / 35), 2, 5));

  double widest_y_label = 0;
  for (const auto& label : frame.y.labels)
    widest_y_label = std::max(widest_y_label, text_width(label, kTickFont));
  const double left_margin = 8 + (panel.y_label.empty() ? 0 : 18) + widest_y_label + 8;
  frame.left = origin_x + left_margin;
  frame.width = std::max(width - left_margin - 18, 10.0);
  frame.x = tight_axis(x_extent, std::clamp(static_cast<int>(frame.width / 60), 2, 5));

  const std::string clip_id = "sched-plot-clip-" + std::to_string(index);
  writer.out += "<g class=\"panel\">\n";
  // The clip leaves room for markers sitting on the frame.
  const double clip_pad = kMarkerRadius + 1;
  writer.out += "<defs><clipPath id=\"" + clip_id + "\">";
  writer.rect(frame.left - clip_pad, frame.top - clip_pad, frame.width + 2 * clip_pad,
              frame.height + 2 * clip_pad, "");
  writer.out += "</clipPath></defs>\n";

  // Grid first, so that everything else lies over it.
  for (double tick : frame.y.ticks) {
    const double y = frame.map_y(tick);
    if (finite(y))
      writer.line(frame.left, y, frame.right(), y, "class=\"grid\" stroke=\"#e6e6e6\"");
  }
  for (double tick : frame.x.ticks) {
    const double x = frame.map_x(tick);
    if (finite(x))
      writer.line(x, frame.top, x, frame.bottom(), "class=\"grid\" stroke=\"#e6e6e6\"");
  }

  writer.out += "<g clip-path=\"url(#" + clip_id + ")\">\n";
  if (panel.band) render_band(writer, frame, *panel.band);
  render_bars(writer, frame, panel);
  std::vector<std::size_t> order(panel.series.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return panel.series[a].layer < panel.series[b].layer;
  });
  for (std::size_t i : order) render_series(writer, frame, panel.series[i], i);
  writer.out += "</g>\n";

  writer.rect(frame.left, frame.top, frame.width, frame.height,
              "class=\"frame\" fill=\"none\" stroke=\"#333333\"");

  const std::string tick_text =
      "font-size=\"" + px(kTickFont) + "\" fill=\"#333333\" text-anchor=\"";
  for (std::size_t i = 0; i < frame.y.ticks.size(); ++i) {
    const double y = frame.map_y(frame.y.ticks[i]);
    if (!finite(y)) continue;
    writer.line(frame.left - 4, y, frame.left, y, "stroke=\"#333333\"");
    writer.text(frame.left - 6, y + kTickFont * 0.35, frame.y.labels[i],
                "class=\"tick-label y\" " + tick_text + "end\"");
  }
  for (std::size_t i = 0; i < frame.x.ticks.size(); ++i) {
    const double x = frame.map_x(frame.x.ticks[i]);
    if (!finite(x)) continue;
    writer.line(x, frame.bottom(), x, frame.bottom() + 4, "stroke=\"#333333\"");
    writer.text(x, frame.bottom() + 4 + kTickFont, frame.x.labels[i],
                "class=\"tick-label x\" " + tick_text + "middle\"");
  }

  const double centre_x = frame.left + frame.width / 2;
  double next_y = frame.bottom() + kRowHeight;
  if (!panel.x_label.empty()) {
    next_y += kRowHeight;
    writer.text(centre_x, next_y, panel.x_label,
                "class=\"axis-label\" font-size=\"" + px(kLabelFont) + "\" text-anchor=\"middle\"");
  }
  if (!panel.y_label.empty()) {
    const double x = origin_x + 8 + kLabelFont;
    const double y = frame.top + frame.height / 2;
    writer.text(x, y, panel.y_label,
                "class=\"axis-label\" font-size=\"" + px(kLabelFont) +
                    "\" text-anchor=\"middle\" transform=\"rotate(-90 " + px(x) + " " + px(y) +
                    ")\"");
  }
  if (!panel.title.empty()) {
    writer.text(centre_x, origin_y + 18, panel.title,
                "class=\"panel-title\" font-size=\"13\" font-weight=\"bold\" "
                "text-anchor=\"middle\"");
  }

  const double legend_left = origin_x + 10;
  const double legend_top = next_y + 6;
  for (const auto& entry : legend) {
    const double x = legend_left + entry.x;
    const double baseline = legend_top + (entry.row + 1) * kRowHeight - 4;
    const double middle = baseline - kLegendFont * 0.35;
    if (entry.swatch == Swatch::Band) {
      writer.rect(x, middle - 5, 20, 10,
                  "class=\"legend-band\" fill=\"" + entry.colour +
                      "\" fill-opacity=\"0.25\" stroke=\"none\"");
    } else if (entry.swatch == Swatch::Bar) {
      writer.rect(x, middle - 4, 20, 8,
                  "class=\"legend-bar\" fill=\"" + entry.colour + "\" stroke=\"none\"");
    } else {
      writer.line(x, middle, x + 20, middle,
                  "stroke-width=\"1.8\" " + stroke_style(entry.colour, entry.dash));
      if (entry.markers)
        writer.circle(x + 10, middle,
                      "class=\"legend-marker\" fill=\"" + escaped(entry.colour) +
                          "\" stroke=\"white\" stroke-width=\"0.8\"");
    }
    writer.text(x + 26, baseline, entry.name,
                "class=\"legend-label\" font-size=\"" + px(kLegendFont) + "\"");
  }
  writer.out += "</g>\n";
}

double sane_size(double size, double fallback) {
  return finite(size) ? std::clamp(size, kMinSize, kMaxSize) : fallback;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!finite(lo) || !finite(hi)) return {};
  if (lo > hi) std::swap(lo, hi);
  ensure_span(lo, hi, false, false);
  // Bounded so that a silly target cannot ask for millions of ticks.
  target = std::clamp(target, 1, 1000);
  const double span = hi - lo;
  if (!finite(span)) return {lo, hi};
  const int exponent = static_cast<int>(std::floor(std::log10(span / target)));
  if (exponent < -300 || exponent > 300) return {lo, hi};

  // Of the 1, 2, 5 and 10 × 10^exponent steps, the one giving the number
  // of intervals nearest the target; ties go to the coarser step.
  int best_mantissa = 1, best_exponent = exponent;
  double best_first = 0, best_last = 0;
  double best_miss = std::numeric_limits<double>::infinity();
  for (const auto& [mantissa, power] : {std::pair{1, exponent}, std::pair{2, exponent},
                                        std::pair{5, exponent}, std::pair{1, exponent + 1}}) {
    const double step = scaled(mantissa, power);
    // The slack absorbs rounding, e.g. 0.3 / 0.1 = 2.9999999999999996.
    const double first = std::floor(lo / step + 1e-9);
    const double last = std::ceil(hi / step - 1e-9);
    // Beyond 2^53 tick indices are no longer exact.
    if (std::abs(first) > 1e15 || std::abs(last) > 1e15) return {lo, hi};
    const double miss = std::abs(last - first - target);
    if (miss <= best_miss) {
      best_miss = miss;
      best_mantissa = mantissa;
      best_exponent = power;
      best_first = first;
      best_last = last;
    }
  }
  std::vector<double> ticks;
  for (double k = best_first; k <= best_last; ++k)
    ticks.push_back(scaled(k * best_mantissa, best_exponent));
  return ticks;
}

std::string format_tick(double value, double step) {
  if (!finite(value)) return "";
  if (value == 0) return "0";
  if (!finite(step) || step <= 0) {
    char buffer[64];
    const auto [end, error] =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 6);
    return error == std::errc{} ? std::string(buffer, end) : "";
  }
  step = std::abs(step);
  // Huge or tiny steps read better in scientific notation, for the whole
  // axis alike (the decision depends on the step, not the value).
  if (step >= 1e8 || step < 1e-6) {
    const int digits =
        static_cast<int>(std::floor(std::log10(std::abs(value))) - std::floor(std::log10(step))) +
        1;
    return compact_scientific(value, std::clamp(digits, 1, 17));
  }
  // Enough decimals to show the step itself (0.25 needs 2, 0.2 needs 1).
  int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  while (decimals < 12) {
    const double units = step * std::pow(10.0, decimals);
    if (std::abs(units - std::round(units)) <= 1e-6 * units) break;
    ++decimals;
  }
  return fixed_text(value, decimals);
}

namespace {

// The document into `writer`.
void render(Writer& writer, const Figure& figure) {
  const double panel_width = sane_size(figure.panel_width, kDefaultPanelWidth);
  const double panel_height = sane_size(figure.panel_height, kDefaultPanelHeight);
  const std::size_t panel_count = figure.panels.size();
  const std::size_t columns = static_cast<std::size_t>(std::clamp<long long>(
      figure.columns, 1, static_cast<long long>(std::max<std::size_t>(panel_count, 1))));
  const std::size_t rows = (panel_count + columns - 1) / columns;
  const double title_height = figure.title.empty() ? 0 : 32;
  const double width = static_cast<double>(columns) * panel_width;
  const double height = std::max(title_height + static_cast<double>(rows) * panel_height, 40.0);

  writer.out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  writer.out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(width) + "\" height=\"" +
                px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
                "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  writer.rect(0, 0, width, height, "class=\"background\" fill=\"white\"");
  if (!figure.title.empty()) {
    writer.text(width / 2, 22, figure.title,
                "class=\"figure-title\" font-size=\"16\" font-weight=\"bold\" "
                "text-anchor=\"middle\"");
  }
  for (std::size_t i = 0; i < panel_count; ++i) {
    const double x = static_cast<double>(i % columns) * panel_width;
    const double y = title_height + static_cast<double>(i / columns) * panel_height;
    render_panel(writer, figure.panels[i], i, x, y, panel_width, panel_height);
  }
  writer.out += "</svg>\n";
}

}  // namespace

std::string render_svg(const Figure& figure) {
  Writer writer;
  render(writer, figure);
  return writer.out.take();
}

void write_svg(const std::string& path, const Figure& figure) {
  Writer writer;  // written from its buffer, without a copy into a string
  render(writer, figure);
  const std::string_view svg = writer.out.view();
  errno = 0;  // so that a reason is reported only if the open set one
  std::ofstream out(path, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out) {
    const int error = errno;
    throw std::runtime_error("cannot open SVG file '" + path + "' for writing" +
                             (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
  out.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  out.close();
  if (!out) throw std::runtime_error("error writing SVG file '" + path + "'");
}

}  // namespace sched::plot
