#include "sched/sim/swf_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace sched::sim {
namespace {

constexpr int kFieldCount = 18;

// 1-based field numbers of the SWF columns we use.
constexpr int kJobNumber = 1;
constexpr int kSubmitTime = 2;
constexpr int kRunTime = 4;
constexpr int kAllocatedProcs = 5;
constexpr int kRequestedProcs = 8;
constexpr int kRequestedTime = 9;
constexpr int kUserId = 12;

// The largest submit, run or requested time a record may give.
constexpr double kMaxSeconds = kMaxWorkloadSeconds;

using Fields = std::array<double, kFieldCount>;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Whether the field at `p` is "-1", which SWF writes for every value it does
// not know: most fields of most records, so it is worth telling apart
// before a from_chars call (about 80 instructions each).
bool unknown(const char* p, const char* stop) {
  return stop - p >= 2 && p[0] == '-' && p[1] == '1' && (stop - p == 2 || is_blank(p[2]));
}

// A field that is not a plain integer (a fraction, an exponent, "-0" with
// its sign, an integer too large for long long) or not a number at all.
std::optional<double> parse_number(std::string_view token) {
  const auto* end = token.data() + token.size();
  double value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Whole numbers small enough to convert to an integer type exactly (2^53).
bool is_integral(double value) {
  return std::floor(value) == value && std::fabs(value) <= 9007199254740992.0;
}

// Reads one source line after another and knows where it is, so every error
// names the place.
class SwfParser {
 public:
  SwfParser(const std::string& source, const SwfOptions& options)
      : source_(source), options_(options) {}

  // `text` is the whole file: each line is a view into it, each field is
  // parsed where it lies (docs/simulator.md: about 1 µs a line).
  SwfTrace parse(std::string_view text) {
    check_options();
    SwfTrace trace;
    Workload& workload = trace.header;
    workload.source = source_;
    workload.cores_per_node = options_.cores_per_node;

    // Records that passed the per-job skip rules (nodes = 0 where one
    // applied), made in place; the cluster-size rule waits until the whole
    // header is known.
    std::vector<SwfRecord>& jobs = trace.records;
    jobs.reserve(line_count(text));
    long records = 0;
    const char* p = text.data();
    const char* const stop = p + text.size();
    while ((options_.max_jobs == 0 || records < options_.max_jobs) && p < stop) {
      const auto* newline =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(stop - p)));
      const char* const end = newline ? newline : stop;
      const char* first = p;
      p = newline ? newline + 1 : stop;
      ++line_number_;
      while (first < end && is_blank(*first)) ++first;
      if (first == end) continue;
      if (*first == ';') {
        read_header(trim(std::string_view(first + 1, static_cast<std::size_t>(end - first - 1))));
        continue;
      }
      ++records;
      read_record(first, end, jobs.emplace_back());
    }

    workload.nodes = cluster_nodes();
    const std::size_t before = jobs.size();
    std::erase_if(
        jobs, [&](const SwfRecord& job) { return job.nodes <= 0 || job.nodes > workload.nodes; });
    workload.skipped += static_cast<int>(before - jobs.size());
    // Traces are mostly in submit order already.
    const auto earlier = [](const SwfRecord& a, const SwfRecord& b) {
      if (a.submit != b.submit) return a.submit < b.submit;
      return a.id < b.id;
    };
    if (!std::is_sorted(jobs.begin(), jobs.end(), earlier)) {
      std::stable_sort(jobs.begin(), jobs.end(), earlier);
    }
    return trace;
  }

 private:
  [[noreturn]] void fail_line(const std::string& what) const {
    throw WorkloadError(source_ + ":" + std::to_string(line_number_) + ": " + what);
  }
  [[noreturn]] void fail_file(const std::string& what) const {
    throw WorkloadError(source_ + ": " + what);
  }

  void check_options() const {
    if (options_.cores_per_node < 1) fail_file("cores_per_node must be at least 1");
    if (options_.nodes < 0) fail_file("nodes must not be negative");
    if (options_.max_jobs < 0) fail_file("max_jobs must not be negative");
  }

  // "; Key: value" header comments; only the machine size matters to us.
  void read_header(std::string_view comment) {
    const auto colon = comment.find(':');
    if (colon == std::string_view::npos) return;
    const auto key = trim(comment.substr(0, colon));
    std::optional<long long>* target = nullptr;
    if (key == "MaxProcs") target = &max_procs_;
    if (key == "MaxNodes") target = &max_nodes_;
    if (target == nullptr) return;

    const auto value = trim(comment.substr(colon + 1));
    long long number = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || ptr == value.data()) {
      fail_line(std::string(key) + " header is not a number: '" + std::string(value) + "'");
    }
    // SWF writes -1 for unknown values; only a positive size counts.
    if (number > 0) *target = number;
  }

  // How many records the text can hold at most: one a line.
  static std::size_t line_count(std::string_view text) {
    std::size_t lines = 1;
    const char* p = text.data();
    const char* const stop = p + text.size();
    while (const auto* newline =
               static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(stop - p)))) {
      ++lines;
      p = newline + 1;
    }
    return lines;
  }

  // The fields of the record in [p, stop) (from its first character), in
  // one pass: each is parsed as an integer where it lies, and only one that
  // is not a plain integer is cut out and parsed again. The errors come in
  // this order: the field count, the first field that is not a number, the
  // first that must be an integer and is not.
  void read_record(const char* p, const char* const stop, SwfRecord& job) {
    Fields fields{};
    std::size_t found = 0;
    std::string_view bad;  // the first field that is not a number
    std::size_t bad_field = 0;
    while (true) {
      while (p < stop && is_blank(*p)) ++p;
      if (p == stop) break;
      const char* const start = p;
      if (found < fields.size()) {
        // Nearly every SWF field is an integer: parsing one as such is
        // several times cheaper than as a double, and exact. "-0" goes the
        // double way (its sign).
        long long whole = 0;
        if (unknown(start, stop)) {
          fields[found] = -1;
          p = start + 2;
        } else if (const auto [ptr, ec] = std::from_chars(start, stop, whole);
                   ec == std::errc() && (ptr == stop || is_blank(*ptr)) &&
                   !(whole == 0 && *start == '-')) {
          fields[found] = static_cast<double>(whole);
          p = ptr;
        } else {
          while (p < stop && !is_blank(*p)) ++p;
          const std::string_view token(start, static_cast<std::size_t>(p - start));
          if (const auto value = parse_number(token)) {
            fields[found] = *value;
          } else if (bad.empty()) {
            bad = token;
            bad_field = found + 1;
          }
        }
      } else {
        while (p < stop && !is_blank(*p)) ++p;
      }
      ++found;
    }
    if (found != static_cast<std::size_t>(kFieldCount)) {
      fail_line("expected " + std::to_string(kFieldCount) + " fields, found " +
                std::to_string(found));
    }
    if (!bad.empty()) {
      fail_line("field " + std::to_string(bad_field) + " is not a number: '" + std::string(bad) +
                "'");
    }
    for (const int integral : {kJobNumber, kAllocatedProcs, kRequestedProcs, kUserId}) {
      if (!is_integral(field(fields, integral))) {
        fail_line("field " + std::to_string(integral) + " must be an integer");
      }
    }
    if (std::fabs(field(fields, kSubmitTime)) > kMaxSeconds ||
        std::fabs(field(fields, kRunTime)) > kMaxSeconds ||
        std::fabs(field(fields, kRequestedTime)) > kMaxSeconds) [[unlikely]] {
      fail_time(fields);
    }
    make_job(fields, job);
  }

  // Names the first time beyond kMaxSeconds (read_record found one).
  [[noreturn]] void fail_time(const Fields& fields) const {
    for (const auto& [number, name] :
         {std::pair{kSubmitTime, "submit time"}, std::pair{kRunTime, "run time"},
          std::pair{kRequestedTime, "requested time"}}) {
      if (std::fabs(field(fields, number)) > kMaxSeconds) {
        fail_line("field " + std::to_string(number) + " (" + name + ") is beyond " +
                  std::to_string(static_cast<long>(kMaxSeconds)) + " s");
      }
    }
    fail_line("a time is beyond the bound");  // not reached: read_record found one
  }

  static double field(const Fields& fields, int number) {
    return fields[static_cast<std::size_t>(number - 1)];
  }

  // The job as docs/design.md §7 replays it, or one of 0 nodes when a skip
  // rule applies.
  void make_job(const Fields& fields, SwfRecord& job) {
    const double runtime = field(fields, kRunTime);
    const double requested = field(fields, kRequestedProcs);
    const double size = requested > 0 ? requested : field(fields, kAllocatedProcs);
    if (runtime < 0 || size <= 0) return skip(job);

    const double nodes = std::ceil(size / options_.cores_per_node);
    // Too large for any int-sized cluster: certainly larger than ours.
    if (nodes > static_cast<double>(std::numeric_limits<int>::max())) return skip(job);

    job.id = static_cast<JobId>(field(fields, kJobNumber));
    job.submit = field(fields, kSubmitTime);
    job.runtime = runtime;
    job.user = static_cast<std::int64_t>(std::max(field(fields, kUserId), 0.0));
    job.nodes = static_cast<int>(nodes);
    // Replay never kills a job, so the estimate is at least the run time.
    const double estimate = field(fields, kRequestedTime);
    job.walltime = std::max(estimate > 0 ? estimate : runtime, runtime);
    // The spec's checks now, so that a bad record is an error of this line
    // (SwfTrace::make builds the rest of the spec, which they do not read).
    // One spec for every line: only what a record sets changes.
    check_.nodes = job.nodes;
    check_.min_nodes = check_.max_nodes = 0;
    check_.walltime = job.walltime;
    if (const auto error = normalize_spec(check_)) fail_line(*error);
  }

  static void skip(SwfRecord& job) { job.nodes = 0; }

  int cluster_nodes() const {
    if (options_.nodes > 0) return options_.nodes;
    const auto procs = max_procs_ ? max_procs_ : max_nodes_;
    if (!procs) {
      fail_file(
          "no cluster size: the header has neither MaxProcs nor MaxNodes; give the number "
          "of nodes");
    }
    const long long nodes = *procs / options_.cores_per_node;
    return static_cast<int>(std::clamp<long long>(nodes, 1, std::numeric_limits<int>::max()));
  }

  const std::string& source_;
  const SwfOptions& options_;
  long line_number_ = 0;
  std::optional<long long> max_procs_;
  std::optional<long long> max_nodes_;
  JobSpec check_;  // make_job's
};

}  // namespace

WorkloadJob SwfTrace::make(std::size_t index) const {
  const SwfRecord& record = records.at(index);
  WorkloadJob job;
  job.id = record.id;
  job.submit = record.submit;
  job.runtime = record.runtime;
  // "job7", "u12": written once each, no temporary strings.
  char text[24] = "job";
  job.spec.name.assign(text, std::to_chars(text + 3, std::end(text), record.id).ptr);
  if (record.user > 0) {
    text[0] = 'u';
    job.spec.user.assign(text, std::to_chars(text + 1, std::end(text), record.user).ptr);
  }
  job.spec.kind = JobKind::Rigid;
  job.spec.nodes = record.nodes;
  // What normalize_spec makes of a rigid job (checked when the record was read).
  job.spec.min_nodes = job.spec.max_nodes = record.nodes;
  job.spec.walltime = record.walltime;
  return job;
}

Workload SwfTrace::workload() const {
  Workload all = header;
  all.jobs.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) all.jobs.push_back(make(i));
  return all;
}

SwfTrace parse_swf_trace(std::istream& in, const std::string& source_name,
                         const SwfOptions& options) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw WorkloadError(source_name + ": read error");
  return SwfParser(source_name, options).parse(std::move(buffer).str());
}

SwfTrace read_swf_trace(const std::string& path, const SwfOptions& options) {
  // The whole file in one read, its size known beforehand.
  std::ifstream in(path, std::ios::binary);
  if (!in) throw WorkloadError(path + ": cannot open SWF file");
  const std::streamoff size =
      in.seekg(0, std::ios::end) ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (size < 0 || !in.seekg(0)) {  // not a plain file (a pipe): read it to its end
    in.clear();
    return parse_swf_trace(in, path, options);
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  if (in.bad()) throw WorkloadError(path + ": read error");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return SwfParser(path, options).parse(text);
}

Workload parse_swf(std::istream& in, const std::string& source_name, const SwfOptions& options) {
  return parse_swf_trace(in, source_name, options).workload();
}

Workload read_swf(const std::string& path, const SwfOptions& options) {
  return read_swf_trace(path, options).workload();
}

}  // namespace sched::sim
