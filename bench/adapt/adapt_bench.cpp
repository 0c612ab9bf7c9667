// The cost of one adaptation step on the live system (issue 6), as in
// Figure 5 of Chadha, John & Gerndt: a local cluster of N virtual nodes
// (schedd and N node agents on loopback, one core each) runs one malleable
// job whose batch script runs bench/adapt/adapt_app with `sched run`, one
// process per node. The policy bench/adapt/step_policy.lua grows it 1 → N
// one node per step, then shrinks it N → 1 one node per step. Each step is
// timed from its job.adapting event to the job's next job.resized event,
// both by the events' own timestamps (schedd's clock) and by when this
// program received them.
//
// Prints a markdown table and a summary; writes a Figure-5-like SVG with
// --out-svg. A step that does not change the job's size (a rolled back
// adaptation), a job that ends early, --step-timeout (no step began or ended
// for that long) or --timeout stop the run: what was measured is still
// printed, and the exit status is 2.
//
//   build/bench/adapt_bench [--nodes 32] [--out-svg FILE] [--timeout S]
//                           [--step-timeout S] [--logs FILE] [--app PROGRAM]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cluster.hpp"
#include "sched/plot/svg_plot.hpp"
#include "test_paths.hpp"

namespace {

using sched::testing::LocalCluster;
using Clock = std::chrono::steady_clock;

// The paper's worst case per step (Chadha et al., Section V-C, Figure 5).
constexpr double kPaperExpandS = 3.1;
constexpr double kPaperShrinkS = 1.8;
// The goal on loopback.
constexpr double kGoalMs = 100;
// What the job script prints when `sched run` returned before the bench was
// done (see the script).
constexpr const char* kEarlyReturn = "adapt_bench: sched run returned before the end";

struct Step {
  int index = 0;   // 1, 2, ...
  std::string op;  // expand | shrink
  int from = 0;
  int to = 0;        // the size asked for
  double began = 0;  // job.adapting's time (schedd's clock, s)
  Clock::time_point began_rx;
  bool ended = false;
  double ended_at = 0;  // job.resized's time
  Clock::time_point ended_rx;
  int size_after = 0;                   // job.resized's nodes
  std::string message;                  // job.resized's message ("adaptation rolled back")
  std::optional<double> app_total_ms;   // rank 0's probe → commit, from the job's output
  std::optional<double> app_window_ms;  // rank 0's wait for the window to open

  double event_ms() const { return (ended_at - began) * 1000; }
  double rx_ms() const {
    return std::chrono::duration<double, std::milli>(ended_rx - began_rx).count();
  }
  bool changed() const { return ended && size_after == to && size_after != from; }
};

// The next event, waiting up to `wait`; nothing on timeout.
std::optional<sched::proto::EventMsg> next_event(zmq::socket_t& sub,
                                                 std::chrono::milliseconds wait) {
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
  zmq::message_t topic;
  if (!sub.recv(topic, zmq::recv_flags::dontwait)) return std::nullopt;
  std::vector<zmq::message_t> frames;
  for (bool more = topic.more(); more;) {
    frames.emplace_back();
    (void)sub.recv(frames.back());
    more = frames.back().more();
  }
  if (frames.size() != 1) return std::nullopt;
  const auto handle = msgpack::unpack(static_cast<const char*>(frames[0].data()), frames[0].size());
  return sched::proto::read_body<sched::proto::EventMsg>(handle.get());
}

// "expand 3 -> 4" (job.adapting's message): the op and the sizes.
bool parse_adapting(const std::string& message, std::string& op, int& from, int& to) {
  static const std::regex pattern(R"((expand|shrink) (\d+) -> (\d+))");
  std::smatch m;
  if (!std::regex_search(message, m, pattern)) return false;
  op = m[1];
  from = std::stoi(m[2]);
  to = std::stoi(m[3]);
  return true;
}

// Rank 0's report lines, by adaptation number (1, 2, ...).
std::map<int, std::pair<double, double>> app_times(const std::string& output) {
  static const std::regex pattern(
      R"(adapt_app: adaptation (\d+) \w+ \d+->\d+ window ([0-9.]+) ms total ([0-9.]+) ms)");
  std::map<int, std::pair<double, double>> out;
  std::ifstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, pattern)) {
      out[std::stoi(m[1])] = {std::stod(m[2]), std::stod(m[3])};
    }
  }
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Stats {
  std::size_t count = 0;
  double median = NAN, p95 = NAN, max = NAN;
};

// Nearest-rank percentiles.
Stats stats(std::vector<double> v) {
  Stats s;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(k, 1, v.size()) - 1];
  };
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.p95 = rank(0.95);
  s.max = v.back();
  return s;
}

std::string ms(double value) {
  if (!std::isfinite(value)) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", value);
  return buf;
}

// Figure 5: time per step against the number of nodes in the window (the
// larger of the two sizes: the new size of an expansion, the old size of a
// shrink), next to the paper's worst cases.
sched::plot::Figure figure(const std::vector<Step>& steps, int nodes) {
  sched::plot::Series expand{"expand", {}, false, true};
  sched::plot::Series shrink{"shrink", {}, false, true};
  for (const Step& s : steps) {
    if (!s.changed()) continue;
    auto& series = s.op == "expand" ? expand : shrink;
    series.points.emplace_back(std::max(s.from, s.to), s.event_ms());
  }
  sched::plot::Panel ours;
  ours.title = "Time per adaptation step (loopback)";
  ours.x_label = "nodes (the larger size of the step)";
  ours.y_label = "milliseconds";
  ours.y_min = 0;
  ours.series = {expand, shrink};

  sched::plot::Panel paper;
  paper.title = "Beside the paper's worst case";
  paper.x_label = "nodes (the larger size of the step)";
  // Milliseconds beside seconds: on a linear axis ours lie flat on zero.
  paper.y_label = "seconds (log scale)";
  paper.log_y = true;
  for (auto series : {expand, shrink}) {
    series.name = "ours, " + series.name;
    for (auto& p : series.points) p.second /= 1000;
    paper.series.push_back(series);
  }
  const double x0 = 1, x1 = std::max(2, nodes);
  paper.series.push_back(
      {"paper, worst expand (3.1 s)", {{x0, kPaperExpandS}, {x1, kPaperExpandS}}, false, false});
  paper.series.push_back(
      {"paper, worst shrink (1.8 s)", {{x0, kPaperShrinkS}, {x1, kPaperShrinkS}}, false, false});

  sched::plot::Figure fig;
  fig.title = "Adaptation latency: one malleable job grown 1 → " + std::to_string(nodes) +
              " and shrunk back, one node per step";
  fig.columns = 2;
  fig.panel_width = 520;
  fig.panel_height = 360;
  fig.panels = {ours, paper};
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time per expand and shrink step of a malleable job on a local cluster"};
  int nodes = 32;
  std::string out_svg;
  double timeout_s = 600;
  double step_timeout_s = 60;
  std::string logs_path;
  std::string log_level = "info";
  std::string app_bin = SCHED_ADAPT_APP_BIN;
  app.add_option("--nodes", nodes, "Virtual nodes (one core each); the job grows 1 → NODES")
      ->capture_default_str()
      ->check(CLI::Range(2, 1024));
  app.add_option("--out-svg", out_svg, "Write the figure (Figure 5 of the paper) here");
  app.add_option("--timeout", timeout_s, "Give up after this many seconds in all")
      ->capture_default_str();
  app.add_option("--step-timeout", step_timeout_s,
                 "Give up when no step began or ended for this many seconds")
      ->capture_default_str();
  app.add_option("--logs", logs_path, "Copy schedd's, the agents' and the job's logs here");
  app.add_option("--log-level", log_level, "The daemons' log level")->capture_default_str();
  app.add_option("--app", app_bin,
                 "The step's program, run as `APP STOP_FILE REPORT_FILE` (default: adapt_app)");
  CLI11_PARSE(app, argc, argv);

  const auto run_start = Clock::now();
  const auto deadline = run_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(timeout_s));
  std::vector<Step> steps;
  std::string stop_reason;
  std::string job_output;
  std::string app_report;    // rank 0's lines
  std::string early_return;  // the script's line when `sched run` returned early
  double started_after_s = 0;
  int exit_code = 0;
  try {
    sched::testing::ClusterOptions options;
    options.policy = SCHED_ADAPT_POLICY;
    options.log_level = log_level;
    options.tick_s = 0.2;
    // Performance data comes with heartbeats: the first step waits for it.
    options.heartbeat_s = 0.25;
    options.down_after_s = 10;
    LocalCluster cluster(options);
    for (int i = 1; i <= nodes; ++i) cluster.start_agent("n" + std::to_string(i), 1);
    if (!sched::testing::eventually(
            [&] {
              const auto list = cluster.client().call<sched::proto::NodeList>(
                  sched::proto::type::kNodesQuery, sched::proto::Empty{});
              int up = 0;
              for (const auto& n : list.nodes) up += n.state != "down";
              return up >= nodes;
            },
            std::chrono::seconds(30))) {
      throw std::runtime_error("not all " + std::to_string(nodes) + " nodes came up\n" +
                               cluster.logs());
    }

    zmq::context_t context(1);
    zmq::socket_t sub(context, zmq::socket_type::sub);
    sub.set(zmq::sockopt::linger, 0);
    sub.set(zmq::sockopt::rcvhwm, 0);
    sub.connect(cluster.event_endpoint());
    sub.set(zmq::sockopt::subscribe, "job.");
    // A subscription takes a moment to reach the publisher.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));

    const std::string work = cluster.work_dir();
    const std::string stop_file = work + "/stop";
    const std::string report_file = work + "/adapt_app.report";
    sched::proto::SubmitRequest request;
    request.job.name = "adapt";
    request.job.user = "bench";
    request.job.kind = "malleable";
    request.job.nodes = 1;
    request.job.min_nodes = 1;
    request.job.max_nodes = nodes;
    request.job.tasks_per_node = 1;
    request.job.workdir = work;
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["ADAPT_APP"] = app_bin;
    // If `sched run` returns before the bench is done (the application
    // failed, or `sched run` took a process that left in a shrink for the
    // step's end), the script says so and keeps the job alive until the
    // bench touches the stop file, so that the run still ends cleanly.
    request.job.env["ADAPT_STOP"] = stop_file;
    request.job.env["ADAPT_REPORT"] = report_file;
    request.job.script = R"(#!/bin/sh
# The step's processes find each other through this folder.
export SCHED_MALL_RENDEZVOUS_DIR="$PWD/rendezvous-$SCHED_JOB_ID"
mkdir -p "$SCHED_MALL_RENDEZVOUS_DIR"
"$SCHED" run "$ADAPT_APP" "$ADAPT_STOP" "$ADAPT_REPORT"
status=$?
if [ ! -e "$ADAPT_STOP" ]; then
  echo "adapt_bench: sched run returned before the end with status $status"
  while [ ! -e "$ADAPT_STOP" ]; do sleep 0.05; done
fi
exit $status
)";
    const auto submitted = Clock::now();
    const std::int64_t id =
        cluster.client().call<sched::proto::SubmitReply>(sched::proto::type::kSubmit, request).id;
    const int total_steps = 2 * (nodes - 1);
    auto last_progress = Clock::now();
    const auto step_limit =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(step_timeout_s));
    std::optional<Step> open;
    bool running = false;
    while (stop_reason.empty()) {
      const auto now = Clock::now();
      if (now > deadline) {
        stop_reason = "--timeout: " + seconds(timeout_s) + " in all";
        break;
      }
      if (now - last_progress > step_limit) {
        std::string where = "before the job started";
        if (open) {
          where = "while step " + std::to_string(open->index) + " (" + open->op + " " +
                  std::to_string(open->from) + " → " + std::to_string(open->to) + ") was under way";
        } else if (running) {
          const int size = steps.empty() ? 1 : steps.back().size_after;
          where = "with the job on " + std::to_string(size) + " node(s) and no step under way";
        }
        stop_reason = "no step began or ended for " + seconds(step_timeout_s) + " " + where;
        break;
      }
      auto event = next_event(sub, std::chrono::milliseconds(100));
      if (!event || event->job != id) continue;
      const auto rx = Clock::now();
      const std::string& topic = event->topic;
      if (topic == "job.started") {
        running = true;
        started_after_s = std::chrono::duration<double>(rx - submitted).count();
        last_progress = rx;
      } else if (topic == "job.adapting") {
        Step s;
        s.index = static_cast<int>(steps.size()) + 1;
        s.began = event->time;
        s.began_rx = rx;
        if (!parse_adapting(event->message.value_or(""), s.op, s.from, s.to)) {
          s.op = "?";
          s.from = event->nodes.value_or(0);
        }
        open = s;
        last_progress = rx;
      } else if (topic == "job.resized") {
        if (!open) {
          stop_reason = "job.resized without a job.adapting before it";
          break;
        }
        Step s = *open;
        open.reset();
        s.ended = true;
        s.ended_at = event->time;
        s.ended_rx = rx;
        s.size_after = event->nodes.value_or(0);
        s.message = event->message.value_or("");
        if (s.op == "?") s.to = s.size_after;
        steps.push_back(s);
        last_progress = rx;
        std::fprintf(stderr, "step %d: %s %d -> %d: %.1f ms%s%s\n", s.index, s.op.c_str(), s.from,
                     s.size_after, s.event_ms(), s.message.empty() ? "" : ": ", s.message.c_str());
        if (!s.changed()) {
          stop_reason = "step " + std::to_string(s.index) + " (" + s.op + " " +
                        std::to_string(s.from) + " → " + std::to_string(s.to) +
                        ") did not change the job's size: it ended on " +
                        std::to_string(s.size_after) + " node(s)" +
                        (s.message.empty() ? "" : " (\"" + s.message + "\")");
          break;
        }
        if (static_cast<int>(steps.size()) == total_steps) break;
      } else if (topic == "job.completed" || topic == "job.failed" || topic == "job.cancelled" ||
                 topic == "job.timeout") {
        stop_reason = "the job ended early (" + topic +
                      (event->message ? ": " + *event->message : std::string()) + ")";
        break;
      }
    }
    if (open) steps.push_back(*open);  // a step still under way: shown as unfinished

    // Let the application end by itself, else cancel it.
    { std::ofstream(stop_file) << "stop\n"; }
    if (!cluster.wait_state(id, "COMPLETED", std::chrono::seconds(20))) {
      try {
        cluster.client().call<sched::proto::Empty>(sched::proto::type::kCancel,
                                                   sched::proto::JobRef{id});
      } catch (const std::exception& e) {
        std::cerr << "adapt_bench: cancel: " << e.what() << "\n";
      }
      sched::testing::eventually(
          [&] {
            const auto state = cluster.job(id).state;
            return state != "RUNNING" && state != "ADAPTING" && state != "COMPLETING";
          },
          std::chrono::seconds(15));
    }
    const auto info = cluster.job(id);
    job_output = read_file(info.output);
    const auto app = app_times(report_file);
    app_report = read_file(report_file);
    if (const auto at = job_output.find(kEarlyReturn); at != std::string::npos) {
      early_return = job_output.substr(at, job_output.find('\n', at) - at);
    }
    int done = 0;
    for (Step& s : steps) {
      if (!s.changed()) continue;
      auto it = app.find(++done);
      if (it != app.end()) {
        s.app_window_ms = it->second.first;
        s.app_total_ms = it->second.second;
      }
    }
    if (!logs_path.empty()) {
      std::ofstream logs(logs_path);
      logs << cluster.logs() << "---- job " << id << " output (" << info.output << ", state "
           << info.state << ")\n"
           << job_output << "---- rank 0's report\n"
           << app_report;
    }
  } catch (const std::exception& e) {
    std::cerr << "adapt_bench: " << e.what() << "\n";
    if (stop_reason.empty()) stop_reason = e.what();
    exit_code = 1;
  }

  // The table.
  std::printf("One malleable job on %d virtual nodes (one core each), started on 1 node, grown\n",
              nodes);
  std::printf(
      "to %d and shrunk back to 1, one node per step (policy `bench/adapt/step_policy.lua`,\n",
      nodes);
  std::printf("application `bench/adapt/adapt_app.c`: one process per node, a token from rank 0\n");
  std::printf("to every process of the new set in each window). A step's time runs from its\n");
  std::printf("`job.adapting` event to the job's `job.resized` event: by the events' timestamps\n");
  std::printf("(schedd's clock) and by when the bench received them; \"app\" is rank 0's time\n");
  std::printf("from the probe that saw the adaptation to its commit.\n\n");
  if (started_after_s > 0)
    std::printf("Submit → job.started: %.1f ms.\n\n", started_after_s * 1000);
  std::printf("| step | nodes | op | ms (event times) | ms (received) | app ms | note |\n");
  std::printf("|---:|---|---|---:|---:|---:|---|\n");
  for (const Step& s : steps) {
    std::string note;
    if (!s.ended) {
      note = "unfinished";
    } else if (!s.changed()) {
      note = "ended on " + std::to_string(s.size_after) + " node(s)" +
             (s.message.empty() ? std::string() : ": " + s.message);
    } else if (!s.app_total_ms) {
      note = "no window in the application's report";
    }
    std::printf("| %d | %d → %d | %s | %s | %s | %s | %s |\n", s.index, s.from, s.to, s.op.c_str(),
                s.ended ? ms(s.event_ms()).c_str() : "–", s.ended ? ms(s.rx_ms()).c_str() : "–",
                s.app_total_ms ? ms(*s.app_total_ms).c_str() : "–", note.c_str());
  }
  std::printf(
      "\n| op | steps | median ms | p95 ms | max ms | max ms (received) | paper's worst | "
      "goal |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string op : {"expand", "shrink"}) {
    std::vector<double> by_event, by_rx;
    for (const Step& s : steps) {
      if (s.op != op || !s.changed()) continue;
      by_event.push_back(s.event_ms());
      by_rx.push_back(s.rx_ms());
    }
    const Stats e = stats(by_event), r = stats(by_rx);
    std::printf("| %s | %zu | %s | %s | %s | %s | %.0f ms | < %.0f ms |\n", op.c_str(), e.count,
                ms(e.median).c_str(), ms(e.p95).c_str(), ms(e.max).c_str(), ms(r.max).c_str(),
                (op == "expand" ? kPaperExpandS : kPaperShrinkS) * 1000, kGoalMs);
  }
  const int changed = static_cast<int>(
      std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.changed(); }));
  if (!stop_reason.empty()) {
    std::printf("\n**Incomplete: %d of %d steps done.** Stopped: %s.\n", changed, 2 * (nodes - 1),
                stop_reason.c_str());
    if (exit_code == 0) exit_code = 2;
  } else {
    std::printf("\nAll %d steps done.\n", changed);
  }
  if (!early_return.empty()) {
    std::printf(
        "\n**`sched run` ended before the bench was done** (the job script said \"%s\"); the "
        "script kept the job alive until the end. With adapt_app this means the step was "
        "not followed through its resizes.\n",
        early_return.c_str());
  }
  if (!job_output.empty()) {
    std::string tail = job_output;
    if (tail.size() > 2000) tail = "…" + tail.substr(tail.size() - 2000);
    std::fprintf(stderr, "---- the job's output\n%s", tail.c_str());
  }

  if (!out_svg.empty()) {
    try {
      sched::plot::write_svg(out_svg, figure(steps, nodes));
    } catch (const std::exception& e) {
      std::cerr << "adapt_bench: " << e.what() << "\n";
      return 1;
    }
  }
  return exit_code;
}
