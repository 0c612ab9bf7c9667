// schedd's read-only HTTP server (civetweb, on its own threads): GET only.
//   /metrics     Prometheus text (docs/metrics.md)
//   /            the web view (web/index.html, embedded in the binary)
//   /api/state   the state the page draws, as JSON
//   /api/events  the event stream as Server-Sent Events; ?since=SEQ (or the
//                Last-Event-ID header a reconnecting EventSource sends)
//                replays the events after SEQ first, or sends a `reset`
//                event when they are no longer held (the page then reloads
//                the state).
// Everything it serves comes from Published (published.hpp): it never
// touches the engine.
#pragma once

#include <atomic>
#include <string>

#include "published.hpp"

struct mg_context;
struct mg_connection;

namespace sched::daemon::http {

class Server {
 public:
  // Listens on `listen` ("HOST:PORT"; port 0: one the system picks).
  // Throws std::runtime_error when it cannot.
  Server(const std::string& listen, const Published& published);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // http://HOST:PORT of the port bound.
  const std::string& url() const { return url_; }

  // Streams open at once at most: each holds one of civetweb's threads, and
  // /metrics must stay reachable.
  static constexpr int kMaxStreams = 8;

 private:
  static int handle(mg_connection* connection, void* self);
  int stream_events(mg_connection* connection);

  const Published& published_;
  mg_context* context_ = nullptr;
  std::string url_;
  std::atomic<int> streams_{0};
};

// The embedded page (web_assets.cpp, generated from web/index.html).
extern const char* const kIndexHtml;

}  // namespace sched::daemon::http
