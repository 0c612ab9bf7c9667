// events.replay (docs/protocol.md §4, §9): what a subscriber missed, read
// back from the journal with the same fields as published.
#include <algorithm>
#include <map>

#include "event_wire.hpp"
#include "handlers/handlers.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::daemon::handlers {

void events_replay(const Message& m) {
  const auto body = m.body<proto::EventsReplayRequest>();
  const std::size_t limit =
      static_cast<std::size_t>(std::clamp<std::uint64_t>(body.limit, 1, proto::kMaxReplayEvents));
  proto::EventsReplayReply reply;
  reply.last_seq = m.daemon.store.last_event_seq();
  std::map<JobId, std::optional<Job>> jobs;  // each job read once a page
  for (const Event& event : m.daemon.store.events_after(body.since, limit)) {
    const Job* job = nullptr;
    if (is_job_event(event)) {
      auto it = jobs.find(event.job);
      if (it == jobs.end()) {
        std::optional<Job> found;
        if (const Job* live = m.daemon.engine.find_job(event.job)) {
          found = *live;
        } else if (auto stored = m.daemon.store.load_job(event.job)) {
          found = std::move(stored->job);
        }
        it = jobs.emplace(event.job, std::move(found)).first;
      }
      if (it->second) job = &*it->second;
    }
    reply.events.push_back(published_event(event, job, m.daemon.engine.partitioned()));
  }
  m.reply(reply);
}

}  // namespace sched::daemon::handlers
