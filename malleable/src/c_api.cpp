// The C entry points (malleable.h): each runs the Session's method and turns
// whatever it throws into a result code and a message, so that nothing
// crosses the C boundary.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <zmq.hpp>

#include "failure.hpp"
#include "sched/malleable.h"
#include "sched/proto/error.hpp"
#include "session.hpp"

struct sched_mall {
  std::unique_ptr<sched::mall::Session> session;
  std::string error;  // the last call's failure
  // The strings of the last sched_mall_request_status (valid until the next call).
  std::string request_code;
  std::string request_message;
};

namespace {

using sched::mall::Failure;

// init and finalize fail without a handle to keep the message in.
thread_local std::string last_init_error;

void remember(std::string& error, const char* message) noexcept {
  try {
    error = message;
  } catch (...) {
    // No room for the message: the code still says what happened.
  }
}

// Runs `body` and returns 0, or the code of what it threw with its message
// kept in `error`.
template <class Body>
int guarded(std::string& error, Body&& body) noexcept {
  error.clear();
  try {
    body();
    return SCHED_MALL_OK;
  } catch (const Failure& e) {
    remember(error, e.what());
    return e.code();
  } catch (const sched::proto::ProtoError& e) {
    remember(error, e.what());
    return SCHED_MALL_EPROTO;
  } catch (const zmq::error_t& e) {
    remember(error, e.what());
    return SCHED_MALL_ECOMM;
  } catch (const std::bad_alloc&) {
    remember(error, "out of memory");
    return SCHED_MALL_ENOMEM;
  } catch (const std::exception& e) {
    remember(error, e.what());
  } catch (...) {
    remember(error, "unknown exception");
  }
  return SCHED_MALL_EINTERNAL;
}

}  // namespace

extern "C" {

int sched_mall_init(sched_mall** out, sched_mall_status* status) {
  if (out) *out = nullptr;
  return guarded(last_init_error, [&] {
    if (!out) throw Failure(SCHED_MALL_EINVAL, "sched_mall_init: out is NULL");
    auto handle = std::make_unique<sched_mall>();
    handle->session = std::make_unique<sched::mall::Session>();
    if (status) *status = handle->session->status();
    *out = handle.release();
  });
}

int sched_mall_rank(const sched_mall* m) { return m ? m->session->rank() : -1; }

int sched_mall_size(const sched_mall* m) { return m ? m->session->size() : -1; }

int sched_mall_probe(sched_mall* m, int* pending) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!pending) throw Failure(SCHED_MALL_EINVAL, "sched_mall_probe: pending is NULL");
    *pending = m->session->probe() ? 1 : 0;
  });
}

int sched_mall_probe_all(sched_mall* m, int* pending) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!pending) throw Failure(SCHED_MALL_EINVAL, "sched_mall_probe_all: pending is NULL");
    *pending = m->session->probe_all() ? 1 : 0;
  });
}

int sched_mall_adapt_begin(sched_mall* m, sched_mall_adaptation* out) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!out) throw Failure(SCHED_MALL_EINVAL, "sched_mall_adapt_begin: out is NULL");
    *out = m->session->adapt_begin();
  });
}

int sched_mall_adapt_window_rank(const sched_mall* m, int new_rank, int* window_rank) {
  if (!m) return SCHED_MALL_EINVAL;
  // The message is the handle's, even on a const handle: it is not state.
  auto* mutable_m = const_cast<sched_mall*>(m);
  return guarded(mutable_m->error, [&] {
    if (!window_rank) {
      throw Failure(SCHED_MALL_EINVAL, "sched_mall_adapt_window_rank: window_rank is NULL");
    }
    *window_rank = m->session->adapt_window_rank(new_rank);
  });
}

int sched_mall_cores(const sched_mall* m, int* node_cores, int* job_cores) {
  if (!m) return SCHED_MALL_EINVAL;
  if (node_cores) *node_cores = m->session->node_cores();
  if (job_cores) *job_cores = m->session->job_cores();
  return SCHED_MALL_OK;
}

int sched_mall_adapt_host(const sched_mall* m, int window_rank, const char** host) {
  if (!m) return SCHED_MALL_EINVAL;
  auto* mutable_m = const_cast<sched_mall*>(m);
  return guarded(mutable_m->error, [&] {
    if (!host) throw Failure(SCHED_MALL_EINVAL, "sched_mall_adapt_host: host is NULL");
    const std::string* node = m->session->adapt_host(window_rank);
    *host = node ? node->c_str() : nullptr;
  });
}

const char* sched_mall_endpoint(const sched_mall* m) {
  return m ? m->session->endpoint().c_str() : "";
}

int sched_mall_adapt_set_endpoint(sched_mall* m, int window_rank, const char* endpoint) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!endpoint || !*endpoint) {
      throw Failure(SCHED_MALL_EINVAL, "sched_mall_adapt_set_endpoint: no endpoint");
    }
    m->session->adapt_set_endpoint(window_rank, endpoint);
  });
}

int sched_mall_adapt_commit(sched_mall* m) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] { m->session->adapt_commit(); });
}

int sched_mall_report_phase(sched_mall* m, double comm_seconds, double compute_seconds) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] { m->session->report_phase(comm_seconds, compute_seconds); });
}

int sched_mall_request(sched_mall* m, int op, int nodes, const char* reason, int* request) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!request) throw Failure(SCHED_MALL_EINVAL, "sched_mall_request: request is NULL");
    *request = 0;
    *request = m->session->request(op, nodes, reason);
  });
}

int sched_mall_request_status(sched_mall* m, int request, sched_mall_request_info* info) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!info) throw Failure(SCHED_MALL_EINVAL, "sched_mall_request_status: info is NULL");
    const sched::proto::ResizeAnswer& answer = m->session->request_status(request);
    if (answer.state == "granted") {
      info->state = SCHED_MALL_REQUEST_GRANTED;
    } else if (answer.state == "refused") {
      info->state = SCHED_MALL_REQUEST_REFUSED;
    } else if (answer.state == "expired") {
      info->state = SCHED_MALL_REQUEST_EXPIRED;
    } else if (answer.state == "pending") {
      info->state = SCHED_MALL_REQUEST_PENDING;
    } else {
      throw Failure(SCHED_MALL_EPROTO,
                    "the scheduler answered the request with state '" + answer.state + "'");
    }
    info->nodes = answer.nodes;
    m->request_code = answer.code;
    m->request_message = answer.message;
    info->code = m->request_code.c_str();
    info->message = m->request_message.c_str();
  });
}

const char* sched_mall_request_state_name(int state) {
  switch (state) {
    case SCHED_MALL_REQUEST_PENDING:
      return "PENDING";
    case SCHED_MALL_REQUEST_GRANTED:
      return "GRANTED";
    case SCHED_MALL_REQUEST_REFUSED:
      return "REFUSED";
    case SCHED_MALL_REQUEST_EXPIRED:
      return "EXPIRED";
    default:
      return "unknown";
  }
}

int sched_mall_send(sched_mall* m, int to_rank, const void* data, size_t size) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] { m->session->send(to_rank, data, size); });
}

int sched_mall_recv(sched_mall* m, int from_rank, void** data, size_t* size) {
  if (!m) return SCHED_MALL_EINVAL;
  return guarded(m->error, [&] {
    if (!data || !size) throw Failure(SCHED_MALL_EINVAL, "sched_mall_recv: data or size is NULL");
    *data = nullptr;
    *size = 0;
    const zmq::message_t message = m->session->recv(from_rank);
    // At least one byte, so that a buffer is never NULL.
    void* buffer = std::malloc(message.size() > 0 ? message.size() : 1);
    // The message is gone from the queue: losing it here is the price of
    // an exhausted heap, reported as such.
    if (!buffer) throw std::bad_alloc();
    if (message.size() > 0) std::memcpy(buffer, message.data(), message.size());
    *data = buffer;
    *size = message.size();
  });
}

void sched_mall_free(void* data) { std::free(data); }

int sched_mall_finalize(sched_mall* m) {
  if (!m) return SCHED_MALL_EINVAL;
  const int code = guarded(last_init_error, [&] { m->session->finalize(); });
  delete m;  // closes the sockets, delivering queued data, whatever the agent said
  return code;
}

const char* sched_mall_error(const sched_mall* m) {
  return m ? m->error.c_str() : last_init_error.c_str();
}

const char* sched_mall_last_init_error(void) { return last_init_error.c_str(); }

const char* sched_mall_strerror(int code) {
  switch (code) {
    case SCHED_MALL_OK:
      return "SCHED_MALL_OK";
    case SCHED_MALL_EENV:
      return "SCHED_MALL_EENV";
    case SCHED_MALL_ENOAGENT:
      return "SCHED_MALL_ENOAGENT";
    case SCHED_MALL_EPROTO:
      return "SCHED_MALL_EPROTO";
    case SCHED_MALL_ETIMEDOUT:
      return "SCHED_MALL_ETIMEDOUT";
    case SCHED_MALL_EINVAL:
      return "SCHED_MALL_EINVAL";
    case SCHED_MALL_ENOTPENDING:
      return "SCHED_MALL_ENOTPENDING";
    case SCHED_MALL_ENOPEER:
      return "SCHED_MALL_ENOPEER";
    case SCHED_MALL_ECOMM:
      return "SCHED_MALL_ECOMM";
    case SCHED_MALL_ENOMEM:
      return "SCHED_MALL_ENOMEM";
    case SCHED_MALL_EINTERNAL:
      return "SCHED_MALL_EINTERNAL";
    case SCHED_MALL_EABORTED:
      return "SCHED_MALL_EABORTED";
    default:
      return "unknown";
  }
}

}  // extern "C"
