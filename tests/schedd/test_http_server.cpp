// schedd's HTTP server (schedd/http/server.hpp) on loopback, through
// civetweb's own client: what is published is served, GET only, unknown
// paths are 404, and the event stream replays from a seq.
#include <civetweb.h>
#include <gtest/gtest.h>

#include <string>

#include "http/published.hpp"
#include "http/server.hpp"

namespace sched::daemon::http {
namespace {

struct Reply {
  int status = 0;
  std::string type;
  std::string body;
};

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// One request; reads the body to its end (or `max` bytes, for streams).
Reply request(const Server& server, const std::string& head, std::size_t max = 1 << 20) {
  char error[256] = {0};
  mg_connection* connection =
      mg_download("127.0.0.1", port_of(server.url()), 0, error, sizeof error, "%s", head.c_str());
  Reply reply;
  if (!connection) {
    ADD_FAILURE() << error;
    return reply;
  }
  const mg_response_info* info = mg_get_response_info(connection);
  reply.status = info->status_code;
  for (int i = 0; i < info->num_headers; ++i) {
    if (std::string(info->http_headers[i].name) == "Content-Type") {
      reply.type = info->http_headers[i].value;
    }
  }
  char buffer[4096];
  while (reply.body.size() < max) {
    const int n = mg_read(connection, buffer, sizeof buffer);
    if (n <= 0) break;
    reply.body.append(buffer, static_cast<std::size_t>(n));
  }
  mg_close_connection(connection);
  return reply;
}

TEST(HttpServer, ServesWhatIsPublishedReadOnly) {
  Published published;
  published.set_snapshot("# HELP m h\n# TYPE m gauge\nm 1\n", R"({"seq":3})");
  Server server("127.0.0.1:0", published);
  ASSERT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0U) << server.url();

  Reply metrics = request(server, "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics.body, "# HELP m h\n# TYPE m gauge\nm 1\n");

  published.set_snapshot("m 2\n", "{}");  // a new snapshot is served at once
  EXPECT_EQ(request(server, "GET /metrics HTTP/1.0\r\n\r\n").body, "m 2\n");

  Reply page = request(server, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_EQ(page.body, kIndexHtml);

  EXPECT_EQ(request(server, "GET /api/state HTTP/1.0\r\n\r\n").body, "{}");
  EXPECT_EQ(request(server, "GET /nothing HTTP/1.0\r\n\r\n").status, 404);
  EXPECT_EQ(request(server, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n").status, 405);
  EXPECT_EQ(request(server, "DELETE /api/state HTTP/1.0\r\n\r\n").status, 405);
}

TEST(HttpServer, TheEventStreamReplaysAfterASeqOrAsksForAReload) {
  Published published;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    published.add_event(seq, "{\"seq\":" + std::to_string(seq) + "}");
  }
  Server server("127.0.0.1:0", published);
  // The stream stays open: read until the two events replayed have come.
  const std::string wanted = "id: 3\ndata: {\"seq\":3}\n\n";
  char error[256] = {0};
  mg_connection* connection =
      mg_download("127.0.0.1", port_of(server.url()), 0, error, sizeof error, "%s",
                  "GET /api/events?since=1 HTTP/1.0\r\n\r\n");
  ASSERT_NE(connection, nullptr) << error;
  EXPECT_EQ(mg_get_response_info(connection)->status_code, 200);
  // A byte at a time: civetweb's mg_read fills the whole buffer of a
  // response without a length before it returns.
  std::string body;
  char buffer[1];
  while (body.find(wanted) == std::string::npos) {
    const int n = mg_read(connection, buffer, sizeof buffer);
    ASSERT_GT(n, 0) << body;
    body.append(buffer, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(body.find("id: 1\n"), std::string::npos);
  EXPECT_NE(body.find("id: 2\ndata: {\"seq\":2}\n\n"), std::string::npos);
  // A live event reaches the open stream.
  published.add_event(4, "{\"seq\":4}");
  while (body.find("id: 4\n") == std::string::npos) {
    const int n = mg_read(connection, buffer, sizeof buffer);
    ASSERT_GT(n, 0) << body;
    body.append(buffer, static_cast<std::size_t>(n));
  }
  mg_close_connection(connection);

  // Events gone from the ring: a reset, and the stream ends.
  for (std::uint64_t seq = 5; seq <= Published::kRing + 10; ++seq) published.add_event(seq, "{}");
  const Reply reset = request(server, "GET /api/events HTTP/1.0\r\nLast-Event-ID: 2\r\n\r\n");
  EXPECT_NE(reset.body.find("event: reset\n"), std::string::npos) << reset.body;
  // Closing wakes open streams, so that the server can stop.
  published.close();
}

}  // namespace
}  // namespace sched::daemon::http
