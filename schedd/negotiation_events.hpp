// The nego.* events of a negotiated partition (issue 20 item 5;
// docs/protocol.md §9 "nego.*"): read off the messages that cross the
// iHypervisor's socket, in both directions, so that they are the same
// whether schedd's own iScheduler or another batch system's is the peer.
// They are published live on the event socket and not journaled: they
// record a conversation, not a change of the engine's state (the starts
// it leads to are job.* events), and a busy partition has many.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/proto/event_messages.hpp"
#include "sched/proto/negotiation_messages.hpp"

namespace sched::daemon {

struct NegoEvent {
  std::string topic;  // nego.offer, nego.mapping, ...
  std::int64_t txn = 0;
  int attempt = 0;
  std::int64_t job = 0;  // nego.urgent, nego.refused
  std::string code;      // who: "hypervisor" or "scheduler" (rejected, not_agreed); urgent: asked,
                         // started, refused
  std::string reason;
  std::string message;  // for people: what was offered, mapped, agreed
};

// The body published: an event's fields (proto::EventMsg, so that any
// subscriber reads it) and the transaction and attempt. seq is 0: these
// events are not in the journal's sequence.
struct NegoEventMsg {
  proto::EventMsg event;
  std::int64_t txn = 0;
  int attempt = 0;
  template <class V>
  void fields(V& v) {
    event.fields(v);
    v("txn", txn);
    v("attempt", attempt);
  }
};

class NegoWatch {
 public:
  // One message the iHypervisor sent (to_scheduler) or received; the
  // events it makes (none for a message that is not a step, or unreadable).
  std::vector<NegoEvent> seen(const std::string& bytes, bool to_scheduler);

 private:
  std::map<std::int64_t, std::string> accepted_;  // txn → its agreed mapping, until answered
};

// "job 5 on s1:0-1; job 6 on s2:3" and "4 cores on 2 nodes".
std::string describe_mapping(const std::vector<proto::NegoPlacement>& mapping);

}  // namespace sched::daemon
