// Pages of the listings clients ask for (docs/protocol.md §4): jobs.query,
// acct and nodes.query apply their filters here, in schedd, then answer at
// most a page of what matches and a cursor to the rest, so that a reply fits
// in a message however long the list. Each page costs what it holds, not
// what came before it: the pending queue, the journal and the node list are
// walked from the cursor on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "daemon_config.hpp"
#include "sched/cluster.hpp"
#include "sched/engine.hpp"
#include "sched/proto/client_messages.hpp"
#include "state_store.hpp"

namespace sched::daemon {

struct PageBounds {
  std::size_t items = 1000;     // entries, at most
  std::size_t bytes = 2 << 20;  // their msgpack encoding, at most (the first entry always goes)
};

// A request's `limit` (absent: 1000; below 1: invalid) cut to the daemon's
// max_page_items, and a byte budget of half the message limit (2 MiB at
// most: half of what any client accepts).
PageBounds page_bounds(const std::optional<std::int64_t>& limit, const DaemonConfig& config);

// jobs.query: the jobs not pending by id (running ones, or ended ones asked
// for by state), then the pending ones in priority order. Cursors: "r<id>"
// after the not-pending job `id`, "p<id>.<rank>" after the pending job `id`,
// which was at `rank`. Ended jobs the engine still holds take their node
// list from the journal.
proto::JobList jobs_page(const Engine& engine, const StateStore& store,
                         const proto::JobsQuery& query, PageBounds bounds);

// acct: ended jobs from the journal by end time, then id; the cursor
// "e<end time>.<id>" (the end time as hex digits of its bits, exact) names
// the last one, and the next page is a keyset query after it.
proto::JobList acct_page(const StateStore& store, const proto::AcctQuery& query, PageBounds bounds);

// nodes.query: the nodes in the engine's order (as they registered), with
// NodeInfo::state idle, alloc, down, drain (idle and draining) or draining;
// the cursor "i<index>" names the last one. `details` adds what the daemon
// knows of a node beside the engine (its agent, why it is down).
using NodeDetails = std::function<void(const Node&, proto::NodeInfo&)>;
proto::NodeList nodes_page(const Cluster& cluster, const proto::NodesQuery& query,
                           PageBounds bounds, const NodeDetails& details);

}  // namespace sched::daemon
