// A socket's route table: message type → handler (docs/design.md §5). Each
// socket's table is filled in one place (routes.cpp); a type given two
// handlers is a programming error that stops schedd at start-up.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/context.hpp"

namespace sched::daemon {

using Handler = void (*)(const Message&);

class RouteTable {
 public:
  // `socket` names the table in errors ("client", "agent").
  explicit RouteTable(std::string socket) : socket_(std::move(socket)) {}

  // Throws std::logic_error when `type` has a handler already.
  RouteTable& add(std::string_view type, Handler handler);

  // Runs the handler of the message's type; a ProtoError unknown_type when
  // the table has none.
  void dispatch(const Message& message) const;

  // The types routed, in order.
  std::vector<std::string> types() const;

 private:
  std::string socket_;
  std::map<std::string, Handler, std::less<>> routes_;
};

// The two sockets' tables (routes.cpp).
RouteTable client_routes();
RouteTable agent_routes();

}  // namespace sched::daemon
