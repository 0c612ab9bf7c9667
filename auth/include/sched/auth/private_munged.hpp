// A munged of our own (docs/security.md §3), for a machine with no system
// munged: `sched cluster up` and the integration tests start one. Its key,
// socket, pid, log and seed files all live in one folder.
#pragma once

#include <string>

namespace sched::auth {

// The socket a private munged in `dir` listens on.
std::string private_munged_socket(const std::string& dir);

// Creates `dir` (0755: other users reach the socket) and its key (once:
// 1024 random bytes, mode 0400), starts munged there in the background
// (with --force when root, which munged otherwise refuses) and waits until
// it answers. Returns the socket. Throws std::runtime_error with munged's
// log when it does not start.
std::string start_private_munged(const std::string& dir);

// Stops the munged of `dir` (its pid file) and waits for it; false when
// none was running.
bool stop_private_munged(const std::string& dir);

}  // namespace sched::auth
