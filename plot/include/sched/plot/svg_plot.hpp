// A small, dependency-free SVG line-chart writer for the experiment figures:
// grids of panels with one line per series, optional markers, step lines and
// a shaded piecewise-constant band (e.g. a power corridor).
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sched::plot {

// One line of a panel. Points are drawn in the given order; non-finite
// points (NaN, ±inf) are skipped and the line joins their neighbours.
struct Series {
  std::string name;  // legend text; an empty name leaves it out of the legend
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool step = false;    // draw as a step function (value holds until next x)
  bool markers = true;  // a small circle on every finite point
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
