// Listings come from schedd in pages (jobs.query, acct, nodes.query;
// docs/protocol.md §4): each reply has a next_cursor while more follow.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "connection.hpp"

namespace sched::cli {

// Asks for `query`'s pages one after another, handing each to `each` as it
// arrives (so that a command can print it, or keep only what it needs);
// `each` returns false to stop before the end.
template <class Reply, class Query, class Each>
void for_each_page(std::string_view type, Query query, Each&& each) {
  while (true) {
    Reply page = client().call<Reply>(type, query);
    std::optional<std::string> next = std::move(page.next_cursor);
    if (!each(std::move(page)) || !next) return;
    query.cursor = std::move(next);
  }
}

}  // namespace sched::cli
