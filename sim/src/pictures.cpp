#include "sched/sim/pictures.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <queue>
#include <unordered_map>

#include "report_text.hpp"
#include "sched/plot/svg_plot.hpp"
#include "sched/plot/text_buffer.hpp"

namespace sched::sim {
namespace {

using ResizesByJob = std::unordered_map<JobId, std::vector<const ResizeRecord *>>;

ResizesByJob resizes_by_job(const std::vector<ResizeRecord> &resizes) {
  ResizesByJob by_job;
  for (const ResizeRecord &r : resizes) by_job[r.job].push_back(&r);
  return by_job;
}

const ResizeRecord *first_of(const ResizesByJob &by_job, JobId id) {
  const auto it = by_job.find(id);
  return it == by_job.end() || it->second.empty() ? nullptr : it->second.front();
}

double first_submit(const std::vector<JobRecord> &jobs) {
  double t0 = jobs.empty() ? 0 : jobs.front().submit;
  for (const JobRecord &job : jobs) t0 = std::min(t0, job.submit);
  return t0;
}

using Change = std::pair<double, long long>;  // (time, change)

// Sorts by time the two runs changes[0, middle) and changes[middle, end)
// (each left as it is when already in order, as a trace's submits are),
// then merges them: cheaper than one sort of the whole. With middle 0 the
// whole is one run.
void sort_by_time(std::vector<Change> &changes, std::size_t middle) {
  const auto by_time = [](const Change &a, const Change &b) { return a.first < b.first; };
  const auto sort_run = [&](auto first, auto last) {
    if (!std::is_sorted(first, last, by_time)) std::sort(first, last, by_time);
  };
  const auto split = changes.begin() + static_cast<std::ptrdiff_t>(middle);
  sort_run(changes.begin(), split);
  sort_run(split, changes.end());
  std::inplace_merge(changes.begin(), split, changes.end(), by_time);
}

// Sums the changes, in two runs as sort_by_time takes them, into a step
// series starting at t0 at 0.
StepSeries accumulate(std::vector<Change> changes, std::size_t middle, double t0, double end_time) {
  // The changes at one time are added up: their order does not matter.
  sort_by_time(changes, middle);
  StepSeries series{{t0, 0}};
  series.reserve(changes.size() + 2);
  long long value = 0;
  for (std::size_t i = 0; i < changes.size();) {
    const double time = changes[i].first;
    for (; i < changes.size() && changes[i].first == time; ++i) value += changes[i].second;
    if (time == series.back().first) {
      series.back().second = static_cast<double>(value);
    } else {
      series.emplace_back(time, static_cast<double>(value));
    }
  }
  if (end_time > series.back().first) series.emplace_back(end_time, series.back().second);
  return series;
}

// Seconds in the unit that suits the run's length, and its name.
struct TimeUnit {
  double seconds;
  const char *name;
};

TimeUnit time_unit(double span_s) {
  if (span_s <= 600) return {1, "s"};
  if (span_s <= 3 * 3600) return {60, "min"};
  if (span_s <= 3 * 86400) return {3600, "h"};
  return {86400, "days"};
}

std::string time_label(const TimeUnit &unit) { return std::string("time (") + unit.name + ")"; }

std::string number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

plot::Series step_line(std::string name, const StepSeries &points, const TimeUnit &unit,
                       double scale = 1) {
  plot::Series series;
  series.name = std::move(name);
  series.step = true;
  series.markers = false;
  series.points.reserve(points.size());
  for (const auto &[t, v] : points) series.points.emplace_back(t / unit.seconds, v * scale);
  return series;
}

// A flat reference line across [from, to].
plot::Series level_line(std::string name, double from, double to, double value) {
  plot::Series series;
  series.name = std::move(name);
  series.markers = false;
  series.dash = "6 3";
  series.colour = "#000000";
  series.points = {{from, value}, {to, value}};
  return series;
}

plot::Figure one_panel_figure(std::string title, plot::Panel panel) {
  plot::Figure figure;
  figure.title = std::move(title);
  figure.panel_width = 960;
  figure.panel_height = 380;
  figure.panels.push_back(std::move(panel));
  return figure;
}

plot::Figure gantt_figure(const SimResult &result, const PictureOptions &options,
                          const TimeUnit &unit) {
  std::vector<const JobRecord *> started;
  for (const JobRecord &job : result.jobs)
    if (job.start >= 0) started.push_back(&job);
  // Only the first max_gantt_jobs are drawn: only they need sorting.
  const auto earlier = [](const JobRecord *a, const JobRecord *b) {
    return a->start != b->start ? a->start < b->start : a->id < b->id;
  };
  const std::size_t total = started.size();
  if (total > options.max_gantt_jobs) {
    std::nth_element(started.begin(),
                     started.begin() + static_cast<std::ptrdiff_t>(options.max_gantt_jobs),
                     started.end(), earlier);
    started.resize(options.max_gantt_jobs);
  }
  std::sort(started.begin(), started.end(), earlier);

  const ResizesByJob by_job = resizes_by_job(result.resizes);
  // Lanes, first fit by start time: a job takes the lowest lane freed
  // before its start, so the chart is about as tall as the most jobs
  // running at once. A job starting as another ends takes another lane:
  // back to back in one lane, the two would read as one resized job.
  using Busy = std::pair<double, int>;  // (until, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<int, std::vector<int>, std::greater<>> free_lanes;
  int lanes = 0;
  std::array<int, 4> group_of_kind{-1, -1, -1, -1};
  plot::Panel panel;
  panel.bars.reserve(started.size());
  double widest = 0;
  plot::TextBuffer tooltip;  // one buffer for every bar's text
  for (const JobRecord *job : started) {
    const double end = job->end >= 0 ? job->end : result.end_time;
    while (!busy.empty() && busy.top().first < job->start) {
      free_lanes.push(busy.top().second);
      busy.pop();
    }
    int lane = lanes;
    if (!free_lanes.empty()) {
      lane = free_lanes.top();
      free_lanes.pop();
    } else {
      ++lanes;
    }
    busy.emplace(end, lane);

    const auto kind = static_cast<std::size_t>(job->kind);
    if (group_of_kind[kind] < 0) {
      group_of_kind[kind] = static_cast<int>(panel.bar_groups.size());
      panel.bar_groups.push_back(std::string(to_string(job->kind)) + " job");
    }
    plot::Bar bar;
    bar.row = lane;
    bar.group = static_cast<std::size_t>(group_of_kind[kind]);
    const auto resizes = by_job.find(job->id);
    int nodes = start_nodes(*job, first_of(by_job, job->id));
    // "job 7 (malleable): 4→8→2 nodes, 120–3600 s", the sizes as the loop finds them.
    tooltip.clear();
    tooltip += "job ";
    tooltip.append_integer(job->id);
    tooltip += " (";
    tooltip += to_string(job->kind);
    tooltip += "): ";
    tooltip.append_integer(nodes);
    double from = job->start;
    if (resizes != by_job.end()) {
      for (const ResizeRecord *r : resizes->second) {
        if (r->time < from || r->time > end) continue;
        if (r->time > from)
          bar.segments.push_back(
              {from / unit.seconds, r->time / unit.seconds, static_cast<double>(nodes)});
        from = r->time;
        nodes = r->to;
        tooltip += "→";
        tooltip.append_integer(nodes);
      }
    }
    bar.segments.push_back({from / unit.seconds, end / unit.seconds, static_cast<double>(nodes)});
    for (const auto &segment : bar.segments) widest = std::max(widest, segment.size);
    tooltip += " nodes, ";
    append_seconds(tooltip, job->start);
    tooltip += "–";
    append_seconds(tooltip, end);
    tooltip += " s";
    bar.tooltip = std::string(tooltip.view());  // made, not assigned: the cheaper
    panel.bars.push_back(std::move(bar));
  }
  panel.bar_full_size = widest;
  panel.title =
      "Each bar a job over its run, as thick as its node count (a full lane: " + number(widest, 0) +
      " nodes); a resize changes the thickness";
  panel.x_label = time_label(unit);
  panel.y_label = "lane (jobs first-fit by start time)";
  panel.y_min = -0.5;
  panel.y_max = std::max(lanes, 1) - 0.5;

  std::string title = "Jobs over time (" + result.policy + "): ";
  title += started.size() < total ? "the first " + std::to_string(started.size()) + " of " +
                                        std::to_string(total) + " started jobs"
                                  : std::to_string(total) + " jobs";
  plot::Figure figure = one_panel_figure(std::move(title), std::move(panel));
  figure.panel_width = 1100;
  figure.panel_height = std::clamp(160.0 + 8.0 * lanes, 320.0, 1400.0);
  return figure;
}

// The time-weighted mean of a step series over `bins` equal spans of its
// time range, one point at each span's start (and one at the end).
StepSeries binned_mean(const StepSeries &series, int bins) {
  StepSeries out;
  if (series.size() < 2 || bins < 1) return series;
  const double from = series.front().first, to = series.back().first;
  const double width = (to - from) / bins;
  if (!(width > 0)) return series;
  std::size_t i = 0;
  for (int b = 0; b < bins; ++b) {
    const double lo = from + b * width, hi = b + 1 == bins ? to : lo + width;
    double area = 0;
    // Steps that overlap [lo, hi): series[i] holds from its time to the next's.
    while (i + 1 < series.size() && series[i + 1].first <= lo) ++i;
    for (std::size_t k = i; k + 1 < series.size() && series[k].first < hi; ++k) {
      const double a = std::max(series[k].first, lo), z = std::min(series[k + 1].first, hi);
      if (z > a) area += series[k].second * (z - a);
    }
    out.emplace_back(lo, area / (hi - lo));
  }
  out.emplace_back(to, out.back().second);
  return out;
}

// A run with more changes than this gets its utilisation averaged too: the
// instantaneous line then fills its pixel columns from low to high.
constexpr std::size_t kDenseSteps = 2000;
constexpr int kMeanBins = 200;

plot::Figure utilisation_figure(const SimResult &result, const TimeUnit &unit) {
  const int nodes = std::max(result.metrics.nodes, 1);
  const StepSeries busy = busy_nodes_series(result.jobs, result.resizes, result.end_time);
  plot::Panel panel;
  panel.title = "Allocated nodes as a share of the cluster";
  panel.x_label = time_label(unit);
  panel.y_label = "utilisation (%)";
  panel.y_min = 0;
  panel.y_max = 100;
  const std::string what = "nodes allocated to jobs (% of " + std::to_string(nodes) + ")";
  if (busy.size() > kDenseSteps) {
    plot::Series instant = step_line(what + ", instantaneous", busy, unit, 100.0 / nodes);
    instant.colour = "#9ecae1";
    panel.series.push_back(std::move(instant));
    panel.series.push_back(step_line(
        "mean over each 1/" + std::to_string(kMeanBins) + " of the run (" +
            number((busy.back().first - busy.front().first) / kMeanBins / unit.seconds, 2) + " " +
            unit.name + ")",
        binned_mean(busy, kMeanBins), unit, 100.0 / nodes));
  } else {
    panel.series.push_back(step_line(what, busy, unit, 100.0 / nodes));
  }
  panel.series.push_back(level_line("utilisation over the makespan (metrics.json): " +
                                        number(result.metrics.utilization * 100, 1) + "%",
                                    busy.front().first / unit.seconds,
                                    busy.back().first / unit.seconds,
                                    result.metrics.utilization * 100));
  return one_panel_figure("Utilisation over time (" + result.policy + ")", std::move(panel));
}

plot::Figure queue_figure(const SimResult &result, const TimeUnit &unit) {
  const StepSeries queue = queue_length_series(result.jobs, result.end_time);
  double most = 0;
  for (const auto &point : queue) most = std::max(most, point.second);
  plot::Panel panel;
  panel.title = "Jobs submitted and not yet started";
  panel.x_label = time_label(unit);
  panel.y_label = "waiting jobs";
  panel.y_min = 0;
  panel.series.push_back(step_line("waiting jobs (max " + number(most, 0) + ")", queue, unit));
  return one_panel_figure("Queue length over time (" + result.policy + ")", std::move(panel));
}

plot::Figure power_figure(const SimResult &result, const TimeUnit &unit) {
  double most = 0;
  bool corridor = false;
  for (const PowerSample &s : result.power) {
    most = std::max({most, s.watts, s.upper_w});
    corridor = corridor || s.lower_w > 0 || s.upper_w > 0;
  }
  const bool kilo = most >= 10000;
  const double scale = kilo ? 1e-3 : 1;
  StepSeries samples;
  for (const PowerSample &s : result.power) samples.emplace_back(s.time, s.watts);
  if (!samples.empty() && result.end_time > samples.back().first)
    samples.emplace_back(result.end_time, samples.back().second);

  plot::Panel panel;
  panel.title = corridor ? "Cluster power and the power corridor" : "Cluster power";
  panel.x_label = time_label(unit);
  panel.y_label = kilo ? "power (kW)" : "power (W)";
  panel.y_min = 0;
  panel.series.push_back(step_line("cluster power", samples, unit, scale));
  if (corridor) {
    plot::Band band;
    band.name = "power corridor [lower, upper]";
    for (const PowerSample &s : result.power) {
      if (band.spans.empty() || std::get<1>(band.spans.back()) != s.lower_w * scale ||
          std::get<2>(band.spans.back()) != s.upper_w * scale) {
        band.spans.emplace_back(s.time / unit.seconds, s.lower_w * scale, s.upper_w * scale);
      }
    }
    panel.band = std::move(band);
  }
  return one_panel_figure("Power over time (" + result.policy + ")", std::move(panel));
}

}  // namespace

StepSeries queue_length_series(const std::vector<JobRecord> &jobs, double end_time) {
  std::vector<Change> changes;
  changes.reserve(2 * jobs.size());
  for (const JobRecord &job : jobs) changes.emplace_back(job.submit, 1);
  const std::size_t submits = changes.size();
  for (const JobRecord &job : jobs) {
    if (job.start >= 0) {
      changes.emplace_back(job.start, -1);
    } else if (job.end >= 0) {
      changes.emplace_back(job.end, -1);
    }
  }
  return accumulate(std::move(changes), submits, first_submit(jobs), end_time);
}

StepSeries busy_nodes_series(const std::vector<JobRecord> &jobs,
                             const std::vector<ResizeRecord> &resizes, double end_time) {
  const ResizesByJob by_job = resizes_by_job(resizes);
  std::vector<Change> changes;
  changes.reserve(2 * jobs.size() + resizes.size());
  for (const JobRecord &job : jobs) {
    if (job.start < 0) continue;
    const double end = job.end >= 0 ? job.end : end_time;
    long long nodes = start_nodes(job, first_of(by_job, job.id));
    changes.emplace_back(job.start, nodes);
    if (const auto it = by_job.find(job.id); it != by_job.end()) {
      for (const ResizeRecord *r : it->second) {
        if (r->time < job.start || r->time > end) continue;
        changes.emplace_back(r->time, r->to - nodes);
        nodes = r->to;
      }
    }
    changes.emplace_back(end, -nodes);
  }
  // One run: starts and ends come in no order (two sorted runs cost more).
  return accumulate(std::move(changes), 0, first_submit(jobs), end_time);
}

int start_nodes(const JobRecord &job, const ResizeRecord *first_resize) {
  if (job.start_nodes > 0) return job.start_nodes;  // recorded by the simulator
  if (first_resize) return first_resize->from;
  if (job.start >= 0 && job.end > job.start && job.node_seconds > 0) {
    return std::max(1, static_cast<int>(std::lround(job.node_seconds / (job.end - job.start))));
  }
  return job.nodes;
}

bool power_modelled(const std::vector<PowerSample> &power) {
  return std::any_of(power.begin(), power.end(), [&](const PowerSample &s) {
    return s.lower_w > 0 || s.upper_w > 0 || s.watts != power.front().watts;
  });
}

std::vector<std::string> write_pictures(const std::string &dir, const SimResult &result,
                                        const PictureOptions &options) {
  const double t0 = first_submit(result.jobs);
  const TimeUnit unit = time_unit(result.end_time - t0);
  const std::filesystem::path base(dir);
  std::vector<std::string> written;
  const auto write = [&](const char *name, const plot::Figure &figure) {
    const std::string path = (base / name).string();
    plot::write_svg(path, figure);
    written.push_back(path);
  };
  write("gantt.svg", gantt_figure(result, options, unit));
  write("utilisation.svg", utilisation_figure(result, unit));
  write("queue.svg", queue_figure(result, unit));
  if (power_modelled(result.power)) write("power.svg", power_figure(result, unit));
  return written;
}

}  // namespace sched::sim
