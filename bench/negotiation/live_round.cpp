// One negotiation round live (issue 20): the iHypervisor component with
// socket_pack.lua on a ZeroMQ ROUTER (its own thread) and the iScheduler
// component with wait_first.lua on a DEALER, over TCP loopback. Each
// iteration submits one job and times it from REQUEST_RESOURCE_OFFER to the
// agreement (S's RESPONSE_NEGOTIATION_END sent); the job then ends and the
// next offer is declined before the next iteration. Two cases: a free
// partition (agreed on the first offer: 6 messages after the request), and
// a fragment left by a running job (the first mapping splits the job, is
// rejected and re-offered: 8). Figures only.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <zmq.hpp>

#include "sched/invasive/components.hpp"
#include "sched/proto/transport.hpp"

using namespace sched;
using namespace sched::invasive;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Figures {
  double median_ms, p95_ms, max_ms;
  std::int64_t messages;
};

Figures run(zmq::context_t& context, const std::string& policy_dir, bool fragment, int iterations) {
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> messages{0};

  std::thread hypervisor([&] {
    HypervisorPolicy policy(policy_dir + "/socket_pack.lua");
    Partition partition(Topology::uniform(1, 2, 4));
    // A job that never ends holds cores 0-2: cores 3 and 4-7 are free.
    if (fragment) partition.start(1'000'000, {{1'000'000, "n0", {0, 1, 2}}}, 0);
    HypervisorComponent h(partition, &policy);
    std::string peer;
    while (!stop) {
      zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(5));
      const double now = now_s();
      while (auto m = proto::receive_routed(router)) {
        peer = m->peer;
        ++messages;
        h.receive(std::string(static_cast<const char*>(m->payload.data()), m->payload.size()), now);
      }
      bool ended = false;
      for (const JobEvent& e : h.take_job_events()) {
        if (e.kind == JobEvent::Kind::Started) {
          h.job_ended(e.job, now);  // done at once: the next iteration finds the same cores
          ended = true;
        }
      }
      if (ended) h.changed(now);
      for (const auto& out : h.take_outgoing()) {
        ++messages;
        proto::send_routed(router, peer, out);
      }
    }
  });

  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  SchedulerPolicy policy(policy_dir + "/wait_first.lua");
  SchedulerComponent s(policy, {3, 10, 0}, "live_round");
  auto flush = [&] {
    for (const auto& out : s.take_outgoing()) dealer.send(zmq::buffer(out));
  };
  auto step = [&] {
    zmq::message_t m;
    if (dealer.recv(m, zmq::recv_flags::none)) {
      s.receive(std::string(static_cast<const char*>(m.data()), m.size()), now_s());
    }
    flush();
  };
  s.start(now_s());
  flush();
  while (!s.side().ready()) step();

  std::vector<double> ms;
  std::int64_t counted = 0;
  for (int i = 0; i < iterations + 5; ++i) {  // the first 5 warm up
    const std::int64_t before = messages;
    const double t0 = now_s();
    s.submit({i + 1, 2, t0}, t0);
    flush();
    while (!s.pending().empty()) step();
    const double t1 = now_s();
    // The next offer (the partition changed) is declined: S is idle again.
    while (s.side().interested() || s.side().phase() != negotiation::Phase::None) step();
    if (i >= 5) {
      ms.push_back((t1 - t0) * 1000);
      counted += messages - before;
    }
  }
  stop = true;
  hypervisor.join();
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 95 / 100)], ms.back(),
          counted / iterations};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One negotiation round live over TCP loopback"};
  int iterations = 200;
  std::string policy_dir = SCHED_SOURCE_POLICY_DIR "/negotiation";
  app.add_option("--iterations", iterations)->capture_default_str();
  app.add_option("--policy-dir", policy_dir)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  zmq::context_t context;
  std::printf(
      "| case | iterations | median ms | 95th percentile ms | max ms | messages per "
      "iteration |\n|---|---|---|---|---|---|\n");
  for (bool fragment : {false, true}) {
    Figures f = run(context, policy_dir, fragment, iterations);
    std::printf("| %s | %d | %.3f | %.3f | %.3f | %lld |\n",
                fragment ? "split rejected, agreed on the re-offer (2 offers)"
                         : "agreed on the first offer",
                iterations, f.median_ms, f.p95_ms, f.max_ms, static_cast<long long>(f.messages));
  }
  return 0;
}
