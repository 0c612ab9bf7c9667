// `sched events`: schedd's events as they happen, one JSON object per line,
// from its PUB socket: the event's body as published, with each topic's own
// keys (docs/protocol.md §9).
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <iostream>
#include <limits>
#include <memory>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "program_name.hpp"

namespace sched::cli {
namespace {

volatile std::sig_atomic_t stop_requested = 0;

void request_stop(int) { stop_requested = 1; }

// Without SA_RESTART, so that a waiting poll returns at once.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The host of "tcp://HOST:PORT", or nothing for another form.
std::optional<std::string> tcp_host(const std::string& endpoint) {
  constexpr std::string_view kTcp = "tcp://";
  if (endpoint.rfind(kTcp, 0) != 0) return std::nullopt;
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < kTcp.size()) return std::nullopt;
  return endpoint.substr(kTcp.size(), colon - kTcp.size());
}

// schedd reports the address it bound; a wildcard one (tcp://0.0.0.0:7102)
// is reached on the host through which schedd's clients reach it.
std::string reachable(const std::string& event_endpoint, const std::string& client_endpoint) {
  const auto host = tcp_host(event_endpoint);
  if (!host || (*host != "0.0.0.0" && *host != "*" && *host != "[::]")) return event_endpoint;
  auto client_host = tcp_host(client_endpoint).value_or("127.0.0.1");
  if (client_host == "0.0.0.0" || client_host == "*" || client_host == "[::]") {
    client_host = "127.0.0.1";
  }
  return "tcp://" + client_host + event_endpoint.substr(event_endpoint.rfind(':'));
}

struct EventsArgs {
  std::vector<std::string> topics;
  long long since = -1;  // >= 0: the journal's events after this seq first
  long count = 0;        // 0: no limit
  double timeout = 0;    // seconds without an event; 0: none
};

// The next event, waiting up to `wait`; nothing on timeout or interruption.
std::optional<proto::EventMsg> next_event(zmq::socket_t& sub, std::chrono::milliseconds wait) {
  zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
  try {
    if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
    zmq::message_t topic;
    if (!sub.recv(topic, zmq::recv_flags::dontwait)) return std::nullopt;
    std::vector<zmq::message_t> frames;
    for (bool more = topic.more(); more;) {
      frames.emplace_back();
      (void)sub.recv(frames.back());
      more = frames.back().more();
    }
    if (frames.size() != 1) {
      std::cerr << program_name() << ": skipped an event of " << frames.size() + 1 << " frames\n";
      return std::nullopt;
    }
    const auto handle =
        msgpack::unpack(static_cast<const char*>(frames[0].data()), frames[0].size());
    return proto::read_body<proto::EventMsg>(handle.get());
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return std::nullopt;
    throw;
  } catch (const std::exception& e) {
    // One unreadable event is no reason to stop watching the others.
    std::cerr << program_name() << ": skipped an unreadable event: " << e.what() << "\n";
    return std::nullopt;
  }
}

// Prints events in order, each once: with --since, the journal's after
// that seq, then the live ones (docs/protocol.md §9.8). The subscription is
// made first and its events wait in the socket while the journal is read; a
// live event at or below what was printed is a duplicate and dropped, and
// one past the next expected seq means the subscription took hold after the
// journal was read: the gap is read from the journal before it is printed.
class Printer {
 public:
  explicit Printer(const EventsArgs& args)
      : args_(args), last_(static_cast<std::uint64_t>(std::max(args.since, 0LL))) {}

  bool done() const { return args_.count > 0 && printed_ >= args_.count; }

  // A live event.
  void live(const proto::EventMsg& event) {
    if (args_.since < 0) {
      print(event);
      return;
    }
    if (event.seq == 0) {  // live only (nego.*, docs/protocol.md §9.6b): never in the journal
      if (!done() && wanted(event)) print(event);
      return;
    }
    if (event.seq <= last_) return;  // already printed from the journal
    if (event.seq > last_ + 1) replay(event.seq - 1);
    if (!done() && event.seq > last_) emit(event);
  }

  // The journal's events after what was printed, up to `until` (inclusive).
  void replay(std::uint64_t until) {
    while (!done() && last_ < until) {
      proto::EventsReplayRequest request;
      request.since = last_;
      const auto page =
          client().call<proto::EventsReplayReply>(proto::type::kEventsReplay, request);
      for (const auto& event : page.events) {
        if (event.seq > until || done()) return;
        emit(event);
      }
      if (page.events.empty() || last_ >= page.last_seq) return;
    }
  }

 private:
  void emit(const proto::EventMsg& event) {
    last_ = event.seq;
    if (wanted(event)) print(event);
  }
  // The subscription takes every topic so that gaps show; the filter is here.
  bool wanted(const proto::EventMsg& event) const {
    bool wanted = args_.topics.empty();
    for (const auto& topic : args_.topics) wanted = wanted || event.topic.rfind(topic, 0) == 0;
    return wanted;
  }
  void print(const proto::EventMsg& event) {
    std::cout << to_json(event).dump() << std::endl;  // flushed: a pipe's reader sees it now
    ++printed_;
  }

  const EventsArgs& args_;
  std::uint64_t last_;
  long printed_ = 0;
};

void watch(const EventsArgs& args) {
  const auto stats = client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
  if (stats.event_endpoint.empty()) {
    throw std::runtime_error("schedd did not say where it publishes its events");
  }
  const std::string endpoint = reachable(stats.event_endpoint, client_endpoint());
  zmq::context_t context(1);
  zmq::socket_t sub(context, zmq::socket_type::sub);
  sub.set(zmq::sockopt::linger, 0);
  // Encrypted when schedd bound its event socket off loopback.
  secure_socket(sub, stats.event_endpoint);
  sub.connect(endpoint);
  const bool replaying = args.since >= 0;
  if (args.topics.empty() || replaying) sub.set(zmq::sockopt::subscribe, "");
  if (!replaying) {
    for (const auto& topic : args.topics) sub.set(zmq::sockopt::subscribe, topic);
  }
  install_stop_handlers();

  Printer printer(args);
  if (replaying) printer.replay(std::numeric_limits<std::uint64_t>::max());
  using Clock = std::chrono::steady_clock;
  const auto idle_limit = std::chrono::duration<double>(args.timeout);
  auto last = Clock::now();
  while (!stop_requested && !printer.done()) {
    if (args.timeout > 0 && Clock::now() - last >= idle_limit) break;
    // Short waits, so that the idle timeout is checked often enough.
    if (auto event = next_event(sub, std::chrono::milliseconds(100))) {
      printer.live(*event);
      last = Clock::now();
    }
  }
}

}  // namespace

void add_events_command(CLI::App& app) {
  auto args = std::make_shared<EventsArgs>();
  CLI::App* events =
      app.add_subcommand("events", "Print schedd's events as they happen, one JSON per line");
  events
      ->add_option("--topic", args->topics,
                   "Only topics starting with this (job., node., power., ...); repeatable")
      ->delimiter(',');
  events->add_option("--count", args->count, "Stop after N events")->check(positive_number());
  events
      ->add_option("--since", args->since,
                   "First the journal's events after this sequence number (0: all), then "
                   "the live ones: none missed, none twice")
      ->check(CLI::NonNegativeNumber);
  events
      ->add_option("--timeout", args->timeout,
                   "Stop after SECONDS without an event (default: run until interrupted)")
      ->check(positive_number());
  events->callback([args] { run_command([&] { watch(*args); }); });
}

}  // namespace sched::cli
