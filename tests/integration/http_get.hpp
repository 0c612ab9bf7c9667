// A plain HTTP client for the tests of schedd's HTTP server (metrics, web
// view): civetweb's client API, the library schedd serves with.
#pragma once

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace sched::testing {

struct HttpReply {
  int status = 0;  // 0: no connection
  std::string content_type;
  std::string body;
  std::string error;
};

// `method` PATH on 127.0.0.1:port; the whole body (the connection closes after it;
// chromedriver wants HTTP/1.1).
inline HttpReply http_request(int port, const std::string& method, const std::string& path,
                              const std::string& body = {}) {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
  char error[256] = {0};
  // chromedriver checks Host; a body is JSON (WebDriver's commands).
  const std::string head =
      method + " " + path +
      " HTTP/1.1\r\nConnection: close\r\nHost: 127.0.0.1:" + std::to_string(port) +
      "\r\nContent-Type: application/json\r\n" + "Content-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  HttpReply reply;
  mg_connection* connection =
      mg_download("127.0.0.1", port, 0, error, sizeof error, "%s", head.c_str());
  if (!connection) {
    reply.error = error;
    return reply;
  }
  const mg_response_info* info = mg_get_response_info(connection);
  reply.status = info->status_code;
  for (int i = 0; i < info->num_headers; ++i) {
    if (std::string(info->http_headers[i].name) == "Content-Type") {
      reply.content_type = info->http_headers[i].value;
    }
  }
  char buffer[8192];
  for (int n; (n = mg_read(connection, buffer, sizeof buffer)) > 0;) {
    reply.body.append(buffer, static_cast<std::size_t>(n));
  }
  mg_close_connection(connection);
  return reply;
}

inline HttpReply http_get(int port, const std::string& path) {
  return http_request(port, "GET", path);
}

// A loopback port free now (the system's pick, released at once): for a
// config that must name its port before the server starts.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("no free port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// The value of the sample `series` (metric name and labels, as written) in
// Prometheus text; -1 when there is none.
inline double metric_value(const std::string& text, const std::string& series) {
  const std::string prefix = series + " ";
  for (std::size_t at = 0; (at = text.find(prefix, at)) != std::string::npos; ++at) {
    if (at == 0 || text[at - 1] == '\n') {
      return std::stod(text.substr(at + prefix.size(), text.find('\n', at) - at - prefix.size()));
    }
  }
  return -1;
}

}  // namespace sched::testing
