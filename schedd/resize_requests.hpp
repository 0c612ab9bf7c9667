// Evolving jobs' live requests to grow or shrink (issue 17 item 1,
// docs/malleable.md): the engine keeps the request the policy sees
// (Job::request, Engine::resize_request); this keeps who asked, and answers
// them. A request is pending until the job's next adaptation in its
// direction begins (granted), the job stops running or asks anew (refused),
// or its timeout passes (expired: withdrawn from the engine).
//
// Answers and their resize.* events are queued and sent by take(), after
// the turn's replies, so that an application hears "pending" before it
// hears "granted" (both may happen in one turn). Requests live in memory:
// a restart drops them (Daemon::recover withdraws what the journal
// restored, with resize.expired).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/event.hpp"
#include "sched/job.hpp"
#include "sched/proto/process_messages.hpp"

namespace sched::daemon {

class ResizeRequests {
 public:
  // Used when a request gives no timeout (0), and the most one may ask.
  static constexpr double kDefaultTimeoutS = 300;
  static constexpr double kMaxTimeoutS = 86400;

  // Who asked: the agent of `node` for the job's application, or a user
  // (node empty) through `sched resize`.
  struct Asker {
    std::string node;
    std::string user;
  };

  // One answer to deliver: to the agent of `node` (none for a user's
  // request), and the event that records it.
  struct Outgoing {
    std::string node;
    proto::ResizeAnswer answer;
    Event event;
  };

  // A request the engine took (Engine::resize_request succeeded): a new id,
  // answered pending; an earlier request of the job is refused (replaced).
  proto::ResizeAnswer add(const Job& job, const ResizeRequest& request, const Asker& asker,
                          double timeout_s, double now);
  // A request the engine refused at once: its answer (request id 0) and
  // resize.requested + resize.refused events.
  proto::ResizeAnswer refuse(JobId job, int current, int nodes, const Asker& asker,
                             std::string code, std::string message);

  // Follows the engine: job.adapting in a request's direction grants it; a
  // job that stops running refuses it.
  void on_event(const Event& event);
  // Requests past their deadline: expired. Their ids, to withdraw from the
  // engine.
  std::vector<JobId> expire(double now);
  // A request restored from the journal without its asker (after a
  // restart): only its resize.expired event.
  void dropped_at_restart(const Job& job);

  // The answers and events since the last call, in order.
  std::vector<Outgoing> take();

  std::size_t pending() const { return live_.size(); }

 private:
  struct Live {
    std::uint64_t id = 0;
    ResizeRequest request;
    int from = 0;  // the job's size when it asked
    Asker asker;
    double deadline = 0;
  };
  void answer(JobId job, const Live& live, EventType type, std::string state, int nodes,
              std::string code = {}, std::string message = {});

  std::uint64_t next_id_ = 0;
  std::map<JobId, Live> live_;  // one per job: a new request replaces the old
  // The adaptation each job is in (from its job.adapting event): a request
  // whose own pass began it is granted when add() takes it.
  struct Adapting {
    bool grows = false;
    int to = 0;
  };
  std::map<JobId, Adapting> adapting_;
  std::vector<Outgoing> out_;
};

}  // namespace sched::daemon
