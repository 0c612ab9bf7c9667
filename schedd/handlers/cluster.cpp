// The cluster as a whole: its power corridor, and the daemon's counters.
#include "access.hpp"
#include "handlers/handlers.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::daemon::handlers {

void corridor_set(const Message& m) {
  const auto body = m.body<proto::Corridor>();
  require_admin(m, "setting the power corridor");
  if (body.lower_w < 0 || body.upper_w < body.lower_w) {
    throw proto::ProtoError(proto::code::kInvalid, "a corridor needs 0 <= lower <= upper (got " +
                                                       std::to_string(body.lower_w) + ", " +
                                                       std::to_string(body.upper_w) + ")");
  }
  m.daemon.engine.set_corridor(body.lower_w, body.upper_w);
  m.reply(proto::Empty{});
}

void corridor_show(const Message& m) {
  const PowerView power = m.daemon.engine.power();
  proto::Corridor body;
  body.lower_w = power.lower_w;
  body.upper_w = power.upper_w;
  body.current_w = power.current_w;
  m.reply(body);
}

void stats(const Message& m) {
  const DaemonParts& daemon = m.daemon;
  const Engine& engine = daemon.engine;
  const PassStats& s = engine.stats();
  const double now = daemon.clock.now();
  proto::StatsReply stats;
  stats.server_time = now;
  stats.uptime_s = now - daemon.started_at;
  stats.passes = s.passes;
  stats.failed_passes = s.failed;
  stats.actions = s.actions;
  stats.refusals = s.refusals;
  stats.last_pass_s = s.last_s;
  stats.mean_pass_s = s.passes ? s.total_s / static_cast<double>(s.passes) : 0;
  stats.max_pass_s = s.max_s;
  stats.pending = engine.pending_queue().listing_size();
  stats.running = engine.running_jobs_count();
  stats.jobs_submitted = daemon.submitted;
  stats.nodes = static_cast<std::uint64_t>(engine.cluster().size());
  for (const Node& node : engine.cluster().nodes()) stats.nodes_up += node.up ? 1 : 0;
  stats.messages = daemon.messages;
  stats.bad_messages = daemon.bad_messages;
  stats.event_endpoint = daemon.event_endpoint;
  const PowerView power = engine.power();
  stats.power_w = power.current_w;
  stats.corridor_lower_w = power.lower_w;
  stats.corridor_upper_w = power.upper_w;
  m.reply(stats);
}

}  // namespace sched::daemon::handlers
