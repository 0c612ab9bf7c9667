#include "sched/pmi/server.hpp"

#include <algorithm>

#include "sched/pmi/wire.hpp"

namespace sched::pmi {

NodeServer::NodeServer(StepInfo info) : info_(std::move(info)) {
  for (int rank : info_.local_ranks) ranks_[rank];
}

void NodeServer::receive(int rank, std::string_view bytes) {
  const auto it = ranks_.find(rank);
  if (it == ranks_.end()) return;
  Rank& state = it->second;
  state.in.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl; (nl = state.in.find('\n', start)) != std::string::npos; start = nl + 1) {
    handle(rank, state, std::string_view(state.in).substr(start, nl - start));
  }
  state.in.erase(0, start);
  if (state.in.size() > kMaxLine) {
    // No newline in sight: answer once and drop what came, so memory stays bounded.
    state.in.clear();
    reply(state, "error", {{"rc", "-1"}, {"msg", "line too long"}});
  }
}

std::string NodeServer::take_output(int rank) {
  const auto it = ranks_.find(rank);
  if (it == ranks_.end()) return {};
  std::string out;
  out.swap(it->second.out);
  return out;
}

void NodeServer::reply(Rank& state, std::string name,
                       std::vector<std::pair<std::string, std::string>> args) {
  state.out += format(Command{std::move(name), std::move(args)});
}

void NodeServer::fail(int rank, std::string message) {
  if (!failure_) failure_ = Failure{rank, std::move(message)};
}

void NodeServer::handle(int rank, Rank& state, std::string_view line) {
  std::string why;
  const auto parsed = parse(line, &why);
  if (!parsed) {
    reply(state, "error", {{"rc", "-1"}, {"msg", "malformed command: " + why}});
    return;
  }
  const Command& c = *parsed;
  const auto arg = [&](std::string_view key) {
    const std::string* value = c.find(key);
    return value ? *value : std::string();
  };
  const std::string ok = "0";
  if (c.name == "init") {
    state.initialized = true;
    // The simple client speaks 1.1; a PMI-2 client does not send this line.
    reply(state, "response_to_init", {{"pmi_version", "1"}, {"pmi_subversion", "1"}, {"rc", ok}});
  } else if (c.name == "get_maxes") {
    reply(state, "maxes",
          {{"kvsname_max", std::to_string(kKvsNameMax)},
           {"keylen_max", std::to_string(kKeyMax)},
           {"vallen_max", std::to_string(kValueMax)},
           {"rc", ok}});
  } else if (c.name == "get_appnum") {
    reply(state, "appnum", {{"appnum", "0"}, {"rc", ok}});
  } else if (c.name == "get_my_kvsname") {
    reply(state, "my_kvsname", {{"kvsname", info_.kvsname}, {"rc", ok}});
  } else if (c.name == "get_universe_size") {
    reply(state, "universe_size", {{"size", std::to_string(info_.size)}, {"rc", ok}});
  } else if (c.name == "put") {
    const std::string key = arg("key");
    const std::string* value = c.find("value");
    if (key.empty() || !value) {
      reply(state, "put_result", {{"rc", "-1"}, {"msg", "put needs key= and value="}});
    } else if (arg("kvsname") != info_.kvsname) {
      reply(state, "put_result", {{"rc", "-1"}, {"msg", "unknown kvsname " + arg("kvsname")}});
    } else if (key.size() > static_cast<std::size_t>(kKeyMax) ||
               value->size() > static_cast<std::size_t>(kValueMax)) {
      reply(state, "put_result", {{"rc", "-1"}, {"msg", "key or value too long"}});
    } else {
      pending_[key] = *value;
      reply(state, "put_result", {{"rc", ok}});
    }
  } else if (c.name == "get") {
    const std::string key = arg("key");
    const std::string* found = nullptr;
    for (const auto* table : {&space_, &pending_, &info_.preset}) {
      if (auto it = table->find(key); it != table->end()) {
        found = &it->second;
        break;
      }
    }
    if (arg("kvsname") != info_.kvsname) {
      reply(state, "get_result", {{"rc", "-1"}, {"msg", "unknown kvsname " + arg("kvsname")}});
    } else if (!found) {
      reply(state, "get_result", {{"rc", "-1"}, {"msg", "key " + key + " not found"}});
    } else {
      reply(state, "get_result", {{"rc", ok}, {"value", *found}});
    }
  } else if (c.name == "barrier_in") {
    state.in_barrier = true;
  } else if (c.name == "finalize") {
    state.finalized = true;
    reply(state, "finalize_ack", {{"rc", ok}});
  } else if (c.name == "abort") {
    const std::string code = arg("exitcode");
    const std::string msg = arg("msg");
    fail(rank, "rank " + std::to_string(rank) + " aborted" +
                   (code.empty() ? std::string() : " with exit code " + code) +
                   (msg.empty() ? std::string() : ": " + msg));
  } else if (c.name == "spawn") {
    reply(state, "spawn_result", {{"rc", "-1"}, {"msg", "spawn is not supported"}});
  } else {
    reply(state, "error", {{"rc", "-1"}, {"msg", "unknown command " + c.name}});
  }
}

std::optional<std::map<std::string, std::string>> NodeServer::take_fence() {
  if (fence_out_) return std::nullopt;
  bool any = false;
  for (const auto& [rank, state] : ranks_) {
    if (state.in_barrier) {
      any = true;
    } else if (!state.finalized && !state.gone) {
      return std::nullopt;  // someone here has yet to come
    }
  }
  if (!any) return std::nullopt;
  fence_out_ = true;
  ++fences_;
  std::map<std::string, std::string> entries;
  entries.swap(pending_);
  return entries;
}

void NodeServer::fence_done(const std::map<std::string, std::string>& entries) {
  if (!fence_out_) return;  // a repeated answer
  fence_out_ = false;
  for (const auto& [key, value] : entries) space_[key] = value;
  for (auto& [rank, state] : ranks_) {
    if (!state.in_barrier) continue;
    state.in_barrier = false;
    reply(state, "barrier_out", {{"rc", "0"}});
  }
}

bool NodeServer::initialized(int rank) const {
  const auto it = ranks_.find(rank);
  return it != ranks_.end() && it->second.initialized;
}

bool NodeServer::finalized(int rank) const {
  const auto it = ranks_.find(rank);
  return it != ranks_.end() && it->second.finalized;
}

void NodeServer::disconnect(int rank) {
  const auto it = ranks_.find(rank);
  if (it == ranks_.end()) return;
  it->second.gone = true;
  it->second.in_barrier = false;
  it->second.out.clear();
}

}  // namespace sched::pmi
