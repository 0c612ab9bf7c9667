// A test peer for the negotiation protocol (docs/negotiation.md): the
// iHypervisor side of sched_negotiation on a real ZeroMQ ROUTER socket, with
// a scripted owner instead of a policy, so that a client written from the
// specification alone (tests/negotiation/client/) can be run against the
// real state machine over the wire. Not the iHypervisor of a partition: it
// launches nothing, its jobs only hold their cores for --job-seconds.
//
// The owner: offers every free core whenever the iScheduler is interested
// and no transaction is open; rejects the first --reject-mappings mappings of
// each transaction (never at the last attempt) and accepts the next; starts
// an urgent job on free cores if there are enough; reports its status at the
// agreed interval.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "sched/negotiation/hypervisor_side.hpp"
#include "sched/proto/transport.hpp"

namespace {

using namespace sched;
using negotiation::HypervisorSide;
using negotiation::Note;

volatile std::sig_atomic_t stopping = 0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct NodeCores {
  std::string name;
  int sockets = 1;
  int cores_per_socket = 1;
};

// "n1:2x2,n2:1x4"
std::vector<NodeCores> parse_nodes(const std::string& text) {
  std::vector<NodeCores> nodes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto colon = item.find(':');
    const auto x = item.find('x', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || x == std::string::npos) {
      throw std::runtime_error("--nodes: '" + item + "' is not NAME:SOCKETSxCORES");
    }
    nodes.push_back({item.substr(0, colon), std::stoi(item.substr(colon + 1, x - colon - 1)),
                     std::stoi(item.substr(x + 1))});
  }
  return nodes;
}

struct RunningJob {
  std::vector<proto::NegoPlacement> placement;
  double ends = 0;  // 0: never
  double started = 0;
};

// The partition as this peer holds it: which cores each job uses.
class Cores {
 public:
  explicit Cores(std::vector<NodeCores> nodes) : nodes_(std::move(nodes)) {}

  using Held = std::set<std::pair<std::string, int>>;

  proto::NegoOfferSet free_offer(std::int64_t id, const Held& held) const {
    proto::NegoOfferSet offer;
    offer.offer = id;
    for (const auto& node : nodes_) {
      proto::NegoResource resource{node.name, {}};
      for (int s = 0; s < node.sockets; ++s) {
        proto::NegoSocket socket{s, {}};
        for (int c = 0; c < node.cores_per_socket; ++c) {
          const int core = s * node.cores_per_socket + c;
          if (!busy_.contains({node.name, core}) && !held.contains({node.name, core})) {
            socket.cores.push_back(core);
          }
        }
        if (!socket.cores.empty()) resource.sockets.push_back(std::move(socket));
      }
      if (!resource.sockets.empty()) offer.resources.push_back(std::move(resource));
    }
    return offer;
  }
  int free_count() const { return total() - static_cast<int>(busy_.size()); }
  bool any_free(const Held& held) const { return !free_offer(0, held).resources.empty(); }
  int total() const {
    int n = 0;
    for (const auto& node : nodes_) n += node.sockets * node.cores_per_socket;
    return n;
  }
  int busy_count() const { return static_cast<int>(busy_.size()); }
  // Whether every core of the placements is free now.
  bool fits(const std::vector<proto::NegoPlacement>& placements) const {
    for (const auto& p : placements) {
      for (int core : p.cores) {
        if (busy_.contains({p.node, core})) return false;
      }
    }
    return true;
  }
  void take(const std::vector<proto::NegoPlacement>& placements) {
    for (const auto& p : placements) {
      for (int core : p.cores) busy_.insert({p.node, core});
    }
  }
  void give_back(const std::vector<proto::NegoPlacement>& placements) {
    for (const auto& p : placements) {
      for (int core : p.cores) busy_.erase({p.node, core});
    }
  }
  // `cores` free cores on at most `nodes` nodes (0: any), node by node.
  std::optional<std::vector<proto::NegoPlacement>> place(std::int64_t job, int cores, int nodes,
                                                         const Held& held) const {
    std::vector<proto::NegoPlacement> out;
    int left = cores;
    for (const auto& node : nodes_) {
      if (left == 0 || (nodes > 0 && static_cast<int>(out.size()) == nodes)) break;
      proto::NegoPlacement p{job, node.name, {}};
      for (int core = 0; core < node.sockets * node.cores_per_socket && left > 0; ++core) {
        if (!busy_.contains({node.name, core}) && !held.contains({node.name, core})) {
          p.cores.push_back(core);
          --left;
        }
      }
      if (!p.cores.empty()) out.push_back(std::move(p));
    }
    if (left > 0) return std::nullopt;
    return out;
  }

 private:
  std::vector<NodeCores> nodes_;
  std::set<std::pair<std::string, int>> busy_;
};

struct Options {
  std::string bind = "tcp://127.0.0.1:*";
  std::string nodes = "n1:2x2,n2:2x2";
  negotiation::HypervisorLimits limits{10, 60, 0.1};
  int reject_mappings = 0;
  std::vector<std::int64_t> running;
  double job_seconds = 0;
};

class Peer {
 public:
  Peer(const Options& options, zmq::socket_t& socket)
      : options_(options), socket_(socket), cores_(parse_nodes(options.nodes)) {
    for (auto job : options.running) jobs_[job] = RunningJob{{}, 0, now_s()};
  }

  void receive(const std::string& peer, std::string_view bytes) {
    auto& session = session_of(peer);
    session.on_message(bytes, now_s());
    after(peer, session);
  }

  void tick() {
    const double now = now_s();
    bool changed = false;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (it->second.ends > 0 && now >= it->second.ends) {
        std::cerr << "job " << it->first << " ended\n";
        cores_.give_back(it->second.placement);
        it = jobs_.erase(it);
        changed = true;
        update_running();
      } else {
        ++it;
      }
    }
    const bool released = std::exchange(released_, false);
    for (auto& [peer, session] : sessions_) {
      session.tick(now);
      if (session.status_due(now)) session.report(status(now), now);
      if (changed || released) offer_if_interested(session, "changed");
      after(peer, session);
    }
  }

 private:
  HypervisorSide& session_of(const std::string& peer) {
    auto it = sessions_.find(peer);
    if (it == sessions_.end()) {
      it = sessions_.emplace(peer, HypervisorSide(options_.limits)).first;
    }
    it->second.set_running(running_ids());
    return it->second;
  }

  std::vector<std::int64_t> running_ids() const {
    std::vector<std::int64_t> ids;
    for (const auto& [id, job] : jobs_) ids.push_back(id);
    return ids;
  }

  proto::NegoStatus status(double now) const {
    proto::NegoStatus s;
    s.time = now;
    s.cores_total = cores_.total();
    s.cores_busy = cores_.busy_count();
    s.utilisation = s.cores_total > 0 ? static_cast<double>(s.cores_busy) / s.cores_total : 0;
    for (const auto& [id, job] : jobs_) {
      int n = 0;
      for (const auto& p : job.placement) n += static_cast<int>(p.cores.size());
      s.jobs.push_back({id, "running", n});
    }
    return s;
  }

  static Cores::Held cores_of(const proto::NegoOfferSet& offer) {
    Cores::Held out;
    for (const auto& r : offer.resources) {
      for (const auto& socket : r.sockets) {
        for (int core : socket.cores) out.insert({r.node, core});
      }
    }
    return out;
  }

  // The cores of every open offer but `mine`'s: an offer holds its cores
  // until its transaction closes (docs/negotiation.md §5.8).
  Cores::Held held(const HypervisorSide* mine) const {
    Cores::Held out;
    for (const auto& [peer, session] : sessions_) {
      if (&session != mine && session.open_offer()) out.merge(cores_of(*session.open_offer()));
    }
    return out;
  }

  // The cores of the offers whose agreement is out (an urgent job may not
  // take them).
  Cores::Held held_by_ending() const {
    Cores::Held out;
    for (const auto& [peer, session] : sessions_) {
      if (session.phase() == negotiation::Phase::Ending && session.open_offer()) {
        out.merge(cores_of(*session.open_offer()));
      }
    }
    return out;
  }

  void abandon_offers_of(const std::vector<proto::NegoPlacement>& placement, std::int64_t job,
                         double now) {
    for (auto& [peer, session] : sessions_) {
      if (!session.open_offer() || session.phase() == negotiation::Phase::Ending) continue;
      const Cores::Held offered = cores_of(*session.open_offer());
      const bool overlaps = std::any_of(placement.begin(), placement.end(), [&](const auto& p) {
        return std::any_of(p.cores.begin(), p.cores.end(), [&](int core) {
          return offered.contains({p.node, core});
        });
      });
      if (overlaps) {
        session.abandon("urgent job " + std::to_string(job) + " took cores of the offer", now);
      }
    }
  }

  void offer_if_interested(HypervisorSide& session, std::string_view reason) {
    const auto others = held(&session);
    if (session.ready() && session.interested() && session.phase() == negotiation::Phase::None &&
        cores_.any_free(others)) {
      session.offer(cores_.free_offer(++offers_, others), reason, now_s());
    }
  }

  void update_running() {
    for (auto& [peer, session] : sessions_) session.set_running(running_ids());
  }

  // Acts on what the session noted, then sends what it has for the peer.
  void after(const std::string& peer, HypervisorSide& session) {
    const double now = now_s();
    for (const Note& note : session.take_notes()) {
      std::cerr << peer_name(peer) << " note " << static_cast<int>(note.kind) << " txn " << note.txn
                << " " << note.code << " " << note.reason << "\n";
      switch (note.kind) {
        case Note::Kind::OfferRequested:
          offer_if_interested(session, "requested");
          break;
        case Note::Kind::Answer:
          judge(session, note, now);
          break;
        case Note::Kind::Agreed:
          released_ = true;  // the rest of its offer is free for the others
          start(note.mapping, now);
          offer_if_interested(session, "changed");
          break;
        case Note::Kind::Closed:
          released_ = true;
          // Still interested after no agreement: offer again at once.
          if (note.outcome != "declined") offer_if_interested(session, "retry");
          break;
        case Note::Kind::Urgent:
          urgent(session, *note.urgent, now);
          break;
        default:
          break;
      }
    }
    for (const auto& m : session.take_outgoing()) proto::send_routed(socket_, peer, m);
  }

  void judge(HypervisorSide& session, const Note& answer, double now) {
    if (!answer.accepted) {
      session.reoffer(cores_.free_offer(++offers_, held(&session)), "offer_rejected", now);
      return;
    }
    int& rejected = rejected_[session.txn()];
    if (!answer.last_attempt && rejected < options_.reject_mappings) {
      ++rejected;
      session.reoffer(cores_.free_offer(++offers_, held(&session)),
                      "mapping_rejected: this test peer rejects the first " +
                          std::to_string(options_.reject_mappings) + " mapping(s)",
                      now);
      return;
    }
    session.accept_mapping(now);
  }

  void start(const std::vector<proto::NegoPlacement>& mapping, double now) {
    if (!cores_.fits(mapping)) {
      // Cannot happen while offers hold their cores; loud if it does.
      std::cerr << "BUG: an agreed mapping no longer fits\n";
      std::abort();
    }
    cores_.take(mapping);
    std::map<std::int64_t, std::vector<proto::NegoPlacement>> by_job;
    for (const auto& p : mapping) by_job[p.job].push_back(p);
    for (auto& [job, placement] : by_job) {
      jobs_[job] = RunningJob{std::move(placement),
                              options_.job_seconds > 0 ? now + options_.job_seconds : 0, now};
      std::cerr << "job " << job << " started\n";
    }
    update_running();
  }

  void urgent(HypervisorSide& session, const proto::NegoUrgent& job, double now) {
    proto::NegoUrgentResponse answer;
    answer.job = job.job;
    // Free cores no offer holds first; else cores of open offers, whose
    // transactions are abandoned first (not one whose agreement is out).
    auto placement = cores_.place(job.job, job.cores, job.nodes, held(nullptr));
    if (!placement) {
      placement = cores_.place(job.job, job.cores, job.nodes, held_by_ending());
      if (placement) abandon_offers_of(*placement, job.job, now);
    }
    if (placement) {
      answer.started = true;
      answer.placement = *placement;
      start(*placement, now);
    } else {
      answer.reason = "not enough free cores: " + std::to_string(cores_.free_count()) + " free, " +
                      std::to_string(job.cores) + " asked";
    }
    session.answer_urgent(answer, now);
  }

  static std::string peer_name(const std::string& peer) {
    std::ostringstream out;
    for (unsigned char c : peer) out << std::hex << static_cast<int>(c);
    return out.str();
  }

  const Options& options_;
  zmq::socket_t& socket_;
  Cores cores_;
  std::map<std::string, HypervisorSide> sessions_;
  std::map<std::int64_t, RunningJob> jobs_;
  std::map<std::int64_t, int> rejected_;  // txn → mappings rejected
  std::int64_t offers_ = 0;
  bool released_ = false;  // a transaction closed: others may be offered its cores
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string running;
  CLI::App app{"A scripted iHypervisor for negotiation protocol tests (docs/negotiation.md)"};
  app.add_option("--bind", options.bind, "ROUTER endpoint")->capture_default_str();
  app.add_option("--nodes", options.nodes, "NAME:SOCKETSxCORES,...")->capture_default_str();
  app.add_option("--max-attempts", options.limits.max_attempts)->capture_default_str();
  app.add_option("--max-timeout", options.limits.max_timeout_s)->capture_default_str();
  app.add_option("--min-status-interval", options.limits.min_status_interval_s)
      ->capture_default_str();
  app.add_option("--reject-mappings", options.reject_mappings,
                 "Mappings rejected per transaction before one is accepted")
      ->capture_default_str();
  app.add_option("--running", running, "Ids of jobs already running (comma-separated)");
  app.add_option("--job-seconds", options.job_seconds, "How long an agreed job runs (0: ever)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::stringstream in(running);
    for (std::string id; std::getline(in, id, ',');) options.running.push_back(std::stoll(id));
    parse_nodes(options.nodes);
  } catch (const std::exception& e) {
    std::cerr << "negotiation_peer: " << e.what() << "\n";
    return 2;
  }
  std::signal(SIGTERM, [](int) { stopping = 1; });
  std::signal(SIGINT, [](int) { stopping = 1; });

  zmq::context_t context;
  zmq::socket_t socket(context, zmq::socket_type::router);
  socket.set(zmq::sockopt::linger, 0);
  socket.bind(options.bind);
  std::cout << "listening " << socket.get(zmq::sockopt::last_endpoint) << std::endl;

  Peer peer(options, socket);
  while (!stopping) {
    zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(20));
    } catch (const zmq::error_t&) {
      continue;  // a signal
    }
    while (auto message = proto::receive_routed(socket)) {
      peer.receive(message->peer,
                   std::string_view(static_cast<const char*>(message->payload.data()),
                                    message->payload.size()));
    }
    peer.tick();
  }
  return 0;
}
