// A small, dependency-free SVG chart writer for the experiment figures and
// the simulator's pictures: grids of panels with one line per series,
// optional markers, step lines, a shaded piecewise-constant band (e.g. a
// power corridor), Gantt bars, and a linear or logarithmic value axis.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sched::plot {

// One line of a panel. Points are drawn in the given order; non-finite
// points (NaN, ±inf) are skipped and the line joins their neighbours. A line
// without markers and with more points than pixel columns is thinned to each
// column's first, lowest, highest and last point: the drawn shape stays the
// same and the file small (a 100,000-job utilisation curve).
struct Series {
  std::string name;  // legend text; an empty name leaves it out of the legend
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool step = false;    // draw as a step function (value holds until next x)
  bool markers = true;  // a small circle on every finite point
  // Style overrides; empty: the palette's colour and dash for the series'
  // position (a colour like "#D55E00", a dash like "6 3").
  std::string colour{};
  std::string dash{};
  // Series are drawn in ascending layer order (stable), so that one can lie
  // beneath another listed before it; the legend keeps the given order.
  int layer = 0;
};

// One stretch of a Gantt bar: from `from` to `to` on the x axis at `size`
// (e.g. a job's node count, which changes when it is resized).
struct BarSegment {
  double from = 0;
  double to = 0;
  double size = 1;
};

// A Gantt bar on row `row` (a y value; rows are 1 apart). Each segment is
// drawn centred on the row, as thick as size / Panel::bar_full_size of the
// row's height (at least a pixel), so a resize shows as a step in the bar.
struct Bar {
  double row = 0;
  std::vector<BarSegment> segments{};
  std::size_t group = 0;  // index into Panel::bar_groups: colour and legend
  std::string tooltip{};  // an SVG <title>; empty: none
};

// A piecewise-constant shaded band, drawn beneath the lines: like a
// schedule of corridor changes, each span (x_from, lo, hi) holds from x_from
// until the next span's x_from in x order (as in a std::map keyed by x; of
// spans at the same x the last given wins), the last one until the end of
// the x axis. Spans with non-finite values are skipped.
struct Band {
  std::vector<std::tuple<double, double, double>> spans;  // (x_from, lo, hi)
  std::string name;  // legend text; empty leaves it out of the legend
};

struct Panel {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
  std::optional<Band> band;
  std::optional<double> y_min;  // force axis start, e.g. 0
  std::optional<double> y_max;  // force axis end
  // A logarithmic value axis (ticks at 1, 2, 5 × 10^k or at decades):
  // values far apart (milliseconds beside seconds) all stay readable.
  // Points, band bounds and forced ends that are not positive are skipped.
  bool log_y = false;
  // Gantt bars, drawn beneath the lines; one legend entry per group.
  std::vector<Bar> bars;
  std::vector<std::string> bar_groups;
  double bar_full_size = 0;  // the size that fills a row; 0: the largest segment size
};

// Panels are laid out row by row, `columns` to a row. Sizes are per panel in
// px and include the panel's margins, labels and legend; sizes are kept
// within [100, 100000].
struct Figure {
  std::string title;
  int columns = 1;
  double panel_width = 420;
  double panel_height = 300;
  std::vector<Panel> panels;
};

// "Nice" tick values (steps of 1, 2 or 5 × 10^k, about `target` intervals)
// covering [lo, hi]: the first tick is ≤ lo and the last ≥ hi. The bounds
// may come in either order; lo == hi is padded; non-finite bounds give none.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// A compact tick label for `value` on an axis whose ticks are `step` apart:
// just enough decimals for the step, no trailing zeros, no exponent for
// ordinary magnitudes (12000 stays "12000").
std::string format_tick(double value, double step);

// The figure as a standalone SVG document.
std::string render_svg(const Figure& figure);

// render_svg to a file; throws std::runtime_error naming the path on failure.
void write_svg(const std::string& path, const Figure& figure);

}  // namespace sched::plot
