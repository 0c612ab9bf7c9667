#include "server.hpp"

#include <civetweb.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string_view>

namespace sched::daemon::http {
namespace {

// civetweb's global set-up, once per process.
void init_library() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

void send(mg_connection* connection, int status, const char* reason, const char* type,
          std::string_view body) {
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
            "Connection: close\r\n\r\n",
            status, reason, type, body.size());
  mg_write(connection, body.data(), body.size());
}

std::uint64_t parse_seq(const char* text) {
  if (!text || !*text) return 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return end && *end == '\0' ? value : 0;
}

bool write_all(mg_connection* connection, const std::string& text) {
  return mg_write(connection, text.data(), text.size()) == static_cast<int>(text.size());
}

}  // namespace

Server::Server(const std::string& listen, const Published& published) : published_(published) {
  init_library();
  // No document root: nothing but the handlers below is served.
  const std::string threads = std::to_string(kMaxStreams + 4);
  const char* options[] = {"listening_ports",    listen.c_str(), "num_threads", threads.c_str(),
                           "request_timeout_ms", "10000",        nullptr};
  mg_callbacks callbacks{};
  // civetweb's own messages (a port in use, ...) go to schedd's log.
  callbacks.log_message = [](const mg_connection*, const char* message) {
    spdlog::warn("http: {}", message);
    return 1;
  };
  context_ = mg_start(&callbacks, this, options);
  if (!context_) throw std::runtime_error("cannot serve HTTP on " + listen);
  mg_server_port ports[4];
  const int n = mg_get_server_ports(context_, 4, ports);
  if (n < 1) {
    mg_stop(context_);
    throw std::runtime_error("cannot serve HTTP on " + listen + ": no port bound");
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  url_ = "http://" + host + ":" + std::to_string(ports[0].port);
  mg_set_request_handler(context_, "/", &Server::handle, this);
}

Server::~Server() {
  // The streams return once Published is closed (the daemon closes it first).
  mg_stop(context_);
}

int Server::handle(mg_connection* connection, void* self_ptr) {
  auto* self = static_cast<Server*>(self_ptr);
  const mg_request_info* request = mg_get_request_info(connection);
  // Read-only: anything but GET is refused.
  if (std::strcmp(request->request_method, "GET") != 0) {
    mg_printf(connection,
              "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 0\r\n"
              "Connection: close\r\n\r\n");
    return 405;
  }
  const std::string_view uri = request->local_uri ? request->local_uri : "";
  if (uri == "/metrics") {
    send(connection, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
         self->published_.metrics());
    return 200;
  }
  if (uri == "/api/state") {
    send(connection, 200, "OK", "application/json", self->published_.state());
    return 200;
  }
  if (uri == "/api/events") return self->stream_events(connection);
  if (uri == "/" || uri == "/index.html") {
    send(connection, 200, "OK", "text/html; charset=utf-8", kIndexHtml);
    return 200;
  }
  send(connection, 404, "Not Found", "text/plain", "not found\n");
  return 404;
}

int Server::stream_events(mg_connection* connection) {
  if (streams_.fetch_add(1) >= kMaxStreams) {
    streams_.fetch_sub(1);
    send(connection, 503, "Service Unavailable", "text/plain", "too many event streams\n");
    return 503;
  }
  std::uint64_t seq = 0;
  if (const char* last = mg_get_header(connection, "Last-Event-ID")) {
    seq = parse_seq(last);
  } else {
    char since[32] = {0};
    const mg_request_info* request = mg_get_request_info(connection);
    if (request->query_string &&
        mg_get_var(request->query_string, std::strlen(request->query_string), "since", since,
                   sizeof since) > 0) {
      seq = parse_seq(since);
    }
  }
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\nretry: 1000\n\n");
  while (true) {
    // A comment line every 15 s finds a client that went away.
    const auto events = published_.events_after(seq, 15000);
    if (!events) {
      if (published_.closed()) break;
      (void)write_all(connection, "event: reset\ndata: {}\n\n");
      break;
    }
    std::string out;
    for (const auto& [event_seq, json] : *events) {
      out += "id: " + std::to_string(event_seq) + "\ndata: " + json + "\n\n";
      seq = event_seq;
    }
    if (out.empty()) out = ": keep-alive\n\n";
    if (!write_all(connection, out)) break;
  }
  streams_.fetch_sub(1);
  return 200;
}

}  // namespace sched::daemon::http
