#include "zap_handler.hpp"

#include <spdlog/spdlog.h>

#include <vector>

#include "sched/proto/curve.hpp"

namespace sched::daemon {

ZapHandler::ZapHandler(zmq::context_t& context, AuthorizedAgentsFile& agents, OnDenied on_denied)
    : socket_(context, zmq::socket_type::rep), agents_(agents), on_denied_(std::move(on_denied)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
}

void ZapHandler::answer() {
  while (true) {
    // A request: version, request id, domain, address, identity, mechanism,
    // credentials (a CURVE client's 32-byte public key).
    std::vector<zmq::message_t> frames;
    while (true) {
      zmq::message_t frame;
      if (!socket_.recv(frame, zmq::recv_flags::dontwait)) break;
      const bool more = frame.more();
      frames.push_back(std::move(frame));
      if (!more) break;
    }
    if (frames.empty()) return;
    const auto text = [&](std::size_t i) {
      return i < frames.size() ? frames[i].to_string() : std::string();
    };
    const std::string version = text(0);
    const std::string request_id = text(1);
    const std::string domain = text(2);
    const std::string address = text(3);
    const std::string mechanism = text(5);
    const std::string key = mechanism == "CURVE" ? proto::curve::z85_of(text(6)) : std::string();

    std::string status = "400";
    std::string why;
    std::string user_id;
    if (version != "1.0" || frames.size() < 7) {
      status = "500";
      why = "malformed ZAP request";
    } else if (mechanism != "CURVE" || key.empty()) {
      why = "not a CURVE connection";
    } else if (domain == kClientDomain) {
      status = "200";  // who the user is comes with each request
      user_id = key;
    } else if (domain == kAgentDomain) {
      // A key just added connects at once, not at the next check of the file.
      if (!agents_.keys().known(key)) {
        if (auto error = agents_.reload_if_changed()) spdlog::error("{}", *error);
      }
      if (agents_.keys().known(key)) {
        status = "200";
        user_id = key;
      } else {
        why = "the key is not in " + agents_.path().string();
      }
    } else {
      why = "unknown ZAP domain '" + domain + "'";
    }
    // The reply: version, request id, status code, status text, user id,
    // metadata.
    const std::string reply_text = status == "200" ? "OK" : why;
    socket_.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(status), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(reply_text), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(user_id), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(std::string()), zmq::send_flags::none);
    if (status != "200" && on_denied_) on_denied_(address, key, why);
  }
}

}  // namespace sched::daemon
