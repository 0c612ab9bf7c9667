#include "handlers/route_table.hpp"

#include <stdexcept>

#include "sched/proto/text.hpp"

namespace sched::daemon {

RouteTable& RouteTable::add(std::string_view type, Handler handler) {
  if (!routes_.emplace(std::string(type), handler).second) {
    throw std::logic_error("the " + socket_ + " socket's message type '" + std::string(type) +
                           "' has two handlers");
  }
  return *this;
}

void RouteTable::dispatch(const Message& message) const {
  const std::string& type = message.envelope.type;
  const auto it = routes_.find(type);
  if (it == routes_.end()) {
    throw proto::ProtoError(proto::code::kUnknownType,
                            "unknown message type '" + proto::excerpt(type) + "'");
  }
  it->second(message);
}

std::vector<std::string> RouteTable::types() const {
  std::vector<std::string> types;
  for (const auto& [type, handler] : routes_) types.push_back(type);
  return types;
}

}  // namespace sched::daemon
