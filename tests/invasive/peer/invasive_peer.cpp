// The iHypervisor component with its Lua policy behind a real ZeroMQ ROUTER
// socket (issue 20), so that the iScheduler written from the specification
// alone (tests/negotiation/client/) negotiates with the real policy over
// the wire. A test program, not a daemon: it launches nothing (an agreed
// job holds its cores for --job-seconds) and serves one iScheduler at a
// time (the last peer that sent PROTOCOL_INIT; another peer's other messages
// are refused not_initialised). The policy file is reloaded when it changes.
// Same command-line contract as negotiation_peer: it prints "listening
// ENDPOINT" first.
#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <sstream>
#include <zmq.hpp>

#include "sched/invasive/components.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/error.hpp"
#include "sched/proto/transport.hpp"

namespace {

using namespace sched;
using namespace sched::invasive;

volatile std::sig_atomic_t stopping = 0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string bind = "tcp://127.0.0.1:*";
  std::string policy;
  int nodes = 2, sockets = 2, cores = 4, max_attempts = 10;
  double job_seconds = 0, min_status = 0.05;
  CLI::App app{"The iHypervisor component and its Lua policy on a ROUTER socket (a test peer)"};
  app.add_option("--bind", bind, "ROUTER endpoint")->capture_default_str();
  app.add_option("--policy", policy, "the iHypervisor's policy file")->required();
  app.add_option("--nodes", nodes, "nodes n0, n1, ...")->capture_default_str();
  app.add_option("--sockets", sockets, "sockets per node")->capture_default_str();
  app.add_option("--cores", cores, "cores per socket")->capture_default_str();
  app.add_option("--max-attempts", max_attempts)->capture_default_str();
  app.add_option("--min-status-interval", min_status)->capture_default_str();
  app.add_option("--job-seconds", job_seconds, "how long an agreed job runs (0: ever)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  HypervisorPolicy hpolicy(policy);
  if (!hpolicy.host().loaded()) {
    std::cerr << "invasive_peer: " << hpolicy.host().last_error().value_or("?") << "\n";
    return 2;
  }
  Partition partition(Topology::uniform(nodes, sockets, cores));
  negotiation::HypervisorLimits limits;
  limits.max_attempts = max_attempts;
  limits.min_status_interval_s = min_status;
  HypervisorComponent hyper(partition, &hpolicy, limits);

  std::signal(SIGTERM, [](int) { stopping = 1; });
  std::signal(SIGINT, [](int) { stopping = 1; });
  zmq::context_t context;
  zmq::socket_t socket(context, zmq::socket_type::router);
  socket.set(zmq::sockopt::linger, 0);
  socket.bind(bind);
  std::cout << "listening " << socket.get(zmq::sockopt::last_endpoint) << std::endl;

  std::string current;                  // the iScheduler served
  std::map<std::int64_t, double> ends;  // job → when it ends
  double last_reload_check = 0;
  std::uint64_t errors_seen = 0;
  while (!stopping) {
    zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(10));
    } catch (const zmq::error_t&) {
      continue;  // a signal
    }
    const double now = now_s();
    while (auto message = proto::receive_routed(socket)) {
      std::string bytes(static_cast<const char*>(message->payload.data()), message->payload.size());
      if (message->peer != current) {
        std::string type;
        std::uint64_t seq = 0;
        try {
          auto envelope = proto::decode(bytes.data(), bytes.size());
          type = envelope.type;
          seq = envelope.seq;
        } catch (const proto::ProtoError&) {
        }
        if (type != proto::type::kNegoInit && !current.empty()) {
          proto::send_routed(socket, message->peer,
                             proto::encode_error(type.empty() ? "error" : type, seq,
                                                 proto::nego_code::kNotInitialised,
                                                 "this iHypervisor serves another iScheduler"));
          continue;
        }
        if (!current.empty() && type == proto::type::kNegoInit) hyper.side().peer_gone();
        current = message->peer;
      }
      hyper.receive(bytes, now);
    }
    // Jobs whose time is up end; the partition changed.
    bool ended = false;
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second <= now) {
        hyper.job_ended(it->first, now);
        std::cerr << "job " << it->first << " ended\n";
        it = ends.erase(it);
        ended = true;
      } else {
        ++it;
      }
    }
    if (ended) hyper.changed(now);
    hyper.tick(now);
    for (const JobEvent& e : hyper.take_job_events()) {
      if (e.kind == JobEvent::Kind::Suspended) {
        ends.erase(e.job);
        std::cerr << "job " << e.job << " suspended\n";
        continue;
      }
      std::cerr << "job " << e.job << (e.kind == JobEvent::Kind::Started ? " started" : " resumed")
                << "\n";
      if (job_seconds > 0) ends[e.job] = now + job_seconds;
    }
    if (now - last_reload_check > 0.2) {
      last_reload_check = now;
      if (hpolicy.host().reload_if_changed()) {
        std::cerr << "policy reloaded: " << hpolicy.host().name() << "\n";
      }
    }
    if (hpolicy.host().failures() != errors_seen) {
      errors_seen = hpolicy.host().failures();
      std::cerr << "policy error: " << hpolicy.host().last_error().value_or("(call failed)")
                << "\n";
    }
    if (!current.empty()) {
      for (const auto& m : hyper.take_outgoing()) proto::send_routed(socket, current, m);
    } else {
      hyper.take_outgoing();
    }
  }
  return 0;
}
