// Messages that wait for the journal: replies to clients and commands to
// agents are sent only after the state they follow from is committed, so a
// crash can never leave a launched process (or an acknowledged submission)
// that the journal does not know about.
#pragma once

#include <string>
#include <vector>
#include <zmq.hpp>

#include "sched/proto/transport.hpp"

namespace sched::daemon {

class Outbox {
 public:
  void post(zmq::socket_t& socket, std::string peer, std::string bytes) {
    items_.push_back({&socket, std::move(peer), std::move(bytes)});
  }
  void flush() {
    for (const Item& item : items_) proto::send_routed(*item.socket, item.peer, item.bytes);
    items_.clear();
  }
  void clear() { items_.clear(); }
  bool empty() const { return items_.empty(); }

 private:
  struct Item {
    zmq::socket_t* socket;
    std::string peer;
    std::string bytes;
  };
  std::vector<Item> items_;
};

}  // namespace sched::daemon
