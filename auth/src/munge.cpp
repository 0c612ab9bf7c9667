#include "sched/auth/munge.hpp"

#include <munge.h>

#include <cstdlib>
#include <memory>

namespace sched::auth {
namespace {

using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, decltype(&munge_ctx_destroy)>;

Context context(const std::string& socket) {
  Context ctx(munge_ctx_create(), &munge_ctx_destroy);
  if (!ctx) throw MungeError(EMUNGE_NO_MEMORY, "cannot create a MUNGE context");
  if (!socket.empty()) {
    const munge_err_t err = munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str());
    if (err != EMUNGE_SUCCESS) throw MungeError(err, munge_strerror(err));
  }
  return ctx;
}

[[noreturn]] void fail(munge_err_t err, munge_ctx_t ctx, const std::string& socket) {
  const char* detail = ctx ? munge_ctx_strerror(ctx) : nullptr;
  std::string message = detail ? detail : munge_strerror(err);
  // libmunge's own detail usually names the socket and asks already.
  if (err == EMUNGE_SOCKET && message.find("munged") == std::string::npos) {
    message +=
        " (is munged running at " + (socket.empty() ? "munge's default socket" : socket) + "?)";
  }
  throw MungeError(err, message);
}

}  // namespace

bool MungeError::replayed() const { return code_ == EMUNGE_CRED_REPLAYED; }
bool MungeError::expired() const {
  return code_ == EMUNGE_CRED_EXPIRED || code_ == EMUNGE_CRED_REWOUND;
}
bool MungeError::unreachable() const { return code_ == EMUNGE_SOCKET; }

std::string munge_encode(std::string_view payload, const std::string& socket, int ttl_s) {
  Context ctx = context(socket);
  if (ttl_s > 0) munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, ttl_s);
  char* cred = nullptr;
  const munge_err_t err =
      ::munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
  if (err != EMUNGE_SUCCESS) fail(err, ctx.get(), socket);
  std::string out(cred);
  std::free(cred);
  return out;
}

MungeCredential munge_decode(const std::string& credential, const std::string& socket) {
  Context ctx = context(socket);
  void* buffer = nullptr;
  int length = 0;
  MungeCredential out;
  const munge_err_t err =
      ::munge_decode(credential.c_str(), ctx.get(), &buffer, &length, &out.uid, &out.gid);
  // Some errors still hand the payload over: freed either way.
  std::unique_ptr<void, decltype(&std::free)> owned(buffer, &std::free);
  if (err != EMUNGE_SUCCESS) fail(err, ctx.get(), socket);
  if (buffer && length > 0) out.payload.assign(static_cast<const char*>(buffer), length);
  return out;
}

bool munge_answers(const std::string& socket) {
  try {
    munge_encode("", socket);
    return true;
  } catch (const MungeError&) {
    return false;
  }
}

}  // namespace sched::auth
