// How a `sched` command reaches schedd, and what every command shares: the
// endpoint (--endpoint, else $SCHED_ENDPOINT, else $SCHED_CLUSTER_ENDPOINT
// as set inside jobs, else a local cluster's from `sched cluster up`, else
// the default loopback one), the request call with
// clear errors, and JSON forms of the wire bodies for --json. Every request
// carries a MUNGE credential of this user (docs/security.md), made through
// munged's socket: $SCHED_MUNGE_SOCKET, else the local cluster's own munged
// when the endpoint is that cluster's, else libmunge's default.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sched/proto/client_messages.hpp"
#include "sched/proto/event_messages.hpp"
#include "sched/proto/transport.hpp"

namespace sched::cli {

// Adds --endpoint and --timeout to the root command (inherited by all).
void add_connection_options(CLI::App& app);

// Number checks for options whose refusal reads as one plain line
// ("--limit: '-3' must be above 0"); CLI11's PositiveNumber and
// NonNegativeNumber word it as a floating-point range.
CLI::Validator positive_number();
CLI::Validator non_negative_number();
std::string client_endpoint();
std::string munge_socket();

// One connection for the command's lifetime.
proto::Client& client();

// schedd's public key for a CURVE link to `endpoint` (docs/security.md §3):
// --server-key, else $SCHED_SERVER_KEY_FILE (these two for any endpoint),
// else, off loopback only, /etc/sched/schedd.pub. Empty: a plain link (on
// loopback, where schedd's sockets are plain). Throws std::runtime_error
// off loopback when no key is found.
std::string server_public_key(const std::string& endpoint);
// Makes `socket` a CURVE client when `bound`, a schedd socket's endpoint as
// schedd bound it, is off loopback (then schedd's socket is a CURVE server);
// before it connects.
void secure_socket(zmq::socket_t& socket, const std::string& bound);

// Runs a command body: a ProtoError prints "sched: <message>" and exits 1;
// a TransportError (no schedd) prints it and exits 2. Anything else: 1.
void run_command(const std::function<void()>& body);

nlohmann::json to_json(const proto::JobInfo& job);
nlohmann::json to_json(const proto::NodeInfo& node);
nlohmann::json to_json(const proto::EventMsg& event);
nlohmann::json to_json(const proto::StatsReply& stats);
nlohmann::json to_json(const proto::PolicyInfoReply& info);
// ---- issue 22
nlohmann::json to_json(const proto::PolicyCheckReply& check);
nlohmann::json to_json(const proto::PolicyHistoryReply& history);

}  // namespace sched::cli
