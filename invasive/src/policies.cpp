#include "sched/invasive/policies.hpp"

#include <cmath>
#include <lua.hpp>

namespace sched::invasive {
namespace {

// ---- C++ → Lua (inside the protected call)

void set_int(lua_State* L, const char* key, lua_Integer value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, key);
}
void set_num(lua_State* L, const char* key, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, key);
}
void set_str(lua_State* L, const char* key, const std::string& value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

void push_ints(lua_State* L, const std::vector<int>& values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    lua_pushinteger(L, values[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

void push_mapping(lua_State* L, const std::vector<proto::NegoPlacement>& mapping) {
  lua_createtable(L, static_cast<int>(mapping.size()), 0);
  for (std::size_t i = 0; i < mapping.size(); ++i) {
    lua_createtable(L, 0, 3);
    set_int(L, "job", mapping[i].job);
    set_str(L, "node", mapping[i].node);
    push_ints(L, mapping[i].cores);
    lua_setfield(L, -2, "cores");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

void push_offer(lua_State* L, const proto::NegoOfferSet& offer) {
  lua_createtable(L, 0, 5);
  set_int(L, "offer", offer.offer);
  lua_pushboolean(L, offer.is_virtual);
  lua_setfield(L, -2, "virtual");
  lua_createtable(L, static_cast<int>(offer.resources.size()), 0);
  for (std::size_t i = 0; i < offer.resources.size(); ++i) {
    const auto& r = offer.resources[i];
    lua_createtable(L, 0, 2);
    set_str(L, "node", r.node);
    lua_createtable(L, static_cast<int>(r.sockets.size()), 0);
    for (std::size_t j = 0; j < r.sockets.size(); ++j) {
      lua_createtable(L, 0, 2);
      set_int(L, "socket", r.sockets[j].socket);
      push_ints(L, r.sockets[j].cores);
      lua_setfield(L, -2, "cores");
      lua_rawseti(L, -2, static_cast<lua_Integer>(j + 1));
    }
    lua_setfield(L, -2, "sockets");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "resources");
}

void push_view(lua_State* L, const HypervisorView& view) {
  const Partition& part = *view.partition;
  const Topology& topo = part.topology();
  lua_createtable(L, 0, 10);
  set_num(L, "time", view.time);
  set_int(L, "txn", view.txn);
  set_int(L, "attempt", view.attempt);
  set_str(L, "reason", view.reason);
  set_int(L, "cores_per_socket", topo.cores_per_socket);
  set_int(L, "sockets_per_node", topo.sockets_per_node);
  set_int(L, "cores_total", part.cores_total());
  set_int(L, "cores_busy", part.cores_busy());
  lua_createtable(L, static_cast<int>(topo.nodes.size()), 0);
  for (std::size_t n = 0; n < topo.nodes.size(); ++n) {
    lua_createtable(L, 0, 2);
    set_str(L, "name", topo.nodes[n]);
    lua_createtable(L, topo.sockets_per_node, 0);
    for (int s = 0; s < topo.sockets_per_node; ++s) {
      std::vector<int> free, busy;
      for (int i = 0; i < topo.cores_per_socket; ++i) {
        const int c = s * topo.cores_per_socket + i;
        (part.is_free(topo.nodes[n], c) ? free : busy).push_back(c);
      }
      lua_createtable(L, 0, 3);
      set_int(L, "socket", s);
      push_ints(L, free);
      lua_setfield(L, -2, "free");
      push_ints(L, busy);
      lua_setfield(L, -2, "busy");
      lua_rawseti(L, -2, s + 1);
    }
    lua_setfield(L, -2, "sockets");
    lua_rawseti(L, -2, static_cast<lua_Integer>(n + 1));
  }
  lua_setfield(L, -2, "nodes");
  lua_createtable(L, static_cast<int>(part.jobs().size()), 0);
  lua_Integer i = 0;
  for (const auto& [id, job] : part.jobs()) {
    lua_createtable(L, 0, 5);
    set_int(L, "job", id);
    set_int(L, "cores", job.cores());
    set_num(L, "start", job.start);
    set_str(L, "state", job.suspended ? "suspended" : "running");
    push_mapping(L, job.placement);
    lua_setfield(L, -2, "placement");
    lua_rawseti(L, -2, ++i);
  }
  lua_setfield(L, -2, "jobs");
  lua_createtable(L, static_cast<int>(view.rejected.size()), 0);
  for (std::size_t r = 0; r < view.rejected.size(); ++r) {
    push_mapping(L, view.rejected[r]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(r + 1));
  }
  lua_setfield(L, -2, "rejected");
}

void push_report(lua_State* L, const std::optional<proto::NegoStatus>& report) {
  if (!report) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, 0, 7);
  set_num(L, "time", report->time);
  set_int(L, "cores_total", report->cores_total);
  set_int(L, "cores_busy", report->cores_busy);
  set_num(L, "utilisation", report->utilisation);
  set_num(L, "throughput_per_hour", report->throughput_per_hour);
  set_num(L, "mean_wait_s", report->mean_wait_s);
  lua_createtable(L, static_cast<int>(report->jobs.size()), 0);
  for (std::size_t i = 0; i < report->jobs.size(); ++i) {
    lua_createtable(L, 0, 3);
    set_int(L, "job", report->jobs[i].job);
    set_str(L, "state", report->jobs[i].state);
    set_int(L, "cores", report->jobs[i].cores);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "jobs");
}

// ---- Lua → C++ (raw access only: a metamethod cannot run here)

void raw_field(lua_State* L, int table, const char* key) {
  lua_pushstring(L, key);
  lua_rawget(L, table);
}

void require_table(lua_State* L, int index, const std::string& what) {
  if (!lua_istable(L, index)) {
    throw PolicyShapeError(what + " is a " + luaL_typename(L, index) + ", not a table");
  }
}

lua_Integer read_integer(lua_State* L, int index, const std::string& what) {
  int is_int = 0;
  const lua_Integer v = lua_tointegerx(L, index, &is_int);
  if (lua_type(L, index) != LUA_TNUMBER || !is_int) {
    throw PolicyShapeError(what + " is not an integer");
  }
  return v;
}

std::string read_string(lua_State* L, int index, const std::string& what) {
  if (lua_type(L, index) != LUA_TSTRING) throw PolicyShapeError(what + " is not a string");
  std::size_t size = 0;
  const char* text = lua_tolstring(L, index, &size);
  return std::string(text, size);
}

template <class F>
void each(lua_State* L, int table, const std::string& what, F&& f) {
  require_table(L, table, what);
  const lua_Unsigned n = lua_rawlen(L, table);
  for (lua_Unsigned i = 1; i <= n; ++i) {
    lua_rawgeti(L, table, static_cast<lua_Integer>(i));
    f(lua_gettop(L), what + "[" + std::to_string(i) + "]");
    lua_pop(L, 1);
  }
}

std::vector<int> read_ints(lua_State* L, int table, const std::string& what) {
  std::vector<int> out;
  each(L, table, what, [&](int v, const std::string& w) {
    out.push_back(static_cast<int>(read_integer(L, v, w)));
  });
  return out;
}

std::vector<proto::NegoPlacement> read_mapping(lua_State* L, int table, const std::string& what) {
  std::vector<proto::NegoPlacement> out;
  each(L, table, what, [&](int p, const std::string& w) {
    require_table(L, p, w);
    proto::NegoPlacement placement;
    raw_field(L, p, "job");
    placement.job = read_integer(L, -1, w + ".job");
    lua_pop(L, 1);
    raw_field(L, p, "node");
    placement.node = read_string(L, -1, w + ".node");
    lua_pop(L, 1);
    raw_field(L, p, "cores");
    placement.cores = read_ints(L, lua_gettop(L), w + ".cores");
    lua_pop(L, 1);
    out.push_back(std::move(placement));
  });
  return out;
}

proto::NegoOfferSet read_offer(lua_State* L, int table) {
  require_table(L, table, "the offer");
  proto::NegoOfferSet offer;
  raw_field(L, table, "virtual");
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1)) throw PolicyShapeError("offer.virtual is not a boolean");
    offer.is_virtual = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  raw_field(L, table, "resources");
  each(L, lua_gettop(L), "offer.resources", [&](int r, const std::string& w) {
    require_table(L, r, w);
    proto::NegoResource resource;
    raw_field(L, r, "node");
    resource.node = read_string(L, -1, w + ".node");
    lua_pop(L, 1);
    raw_field(L, r, "sockets");
    each(L, lua_gettop(L), w + ".sockets", [&](int s, const std::string& ws) {
      require_table(L, s, ws);
      proto::NegoSocket socket;
      raw_field(L, s, "socket");
      socket.socket = static_cast<int>(read_integer(L, -1, ws + ".socket"));
      lua_pop(L, 1);
      raw_field(L, s, "cores");
      socket.cores = read_ints(L, lua_gettop(L), ws + ".cores");
      lua_pop(L, 1);
      if (!socket.cores.empty()) resource.sockets.push_back(std::move(socket));
    });
    lua_pop(L, 1);
    if (!resource.sockets.empty()) offer.resources.push_back(std::move(resource));
  });
  lua_pop(L, 1);
  return offer;
}

std::string optional_reason(lua_State* L, int index) {
  return lua_type(L, index) == LUA_TSTRING ? read_string(L, index, "the reason") : std::string();
}

void set_error(std::string* error, const std::optional<std::string>& failure) {
  if (error && failure) *error = *failure;
}

}  // namespace

HypervisorPolicy::HypervisorPolicy(const std::string& path, LuaHostOptions options)
    : host_(path, {"make_offer", "judge"}, options) {
  host_.load();
}

std::optional<proto::NegoOfferSet> HypervisorPolicy::make_offer(const HypervisorView& view,
                                                                std::string* error) {
  proto::NegoOfferSet offer;
  auto failure = host_.call(
      "make_offer", 1,
      [&](lua_State* L) {
        push_view(L, view);
        return 1;
      },
      [&](lua_State* L, int base) { offer = read_offer(L, base); });
  set_error(error, failure);
  if (failure) return std::nullopt;
  return offer;
}

std::optional<Judgement> HypervisorPolicy::judge(const proto::NegoOfferSet& offer,
                                                 const std::vector<proto::NegoPlacement>& mapping,
                                                 const HypervisorView& view, std::string* error) {
  Judgement judgement;
  auto failure = host_.call(
      "judge", 2,
      [&](lua_State* L) {
        push_offer(L, offer);
        push_mapping(L, mapping);
        push_view(L, view);
        return 3;
      },
      [&](lua_State* L, int base) {
        if (!lua_isboolean(L, base)) throw PolicyShapeError("a verdict that is not a boolean");
        judgement.accepted = lua_toboolean(L, base);
        judgement.reason = optional_reason(L, base + 1);
      });
  set_error(error, failure);
  if (failure) return std::nullopt;
  return judgement;
}

SchedulerPolicy::SchedulerPolicy(const std::string& path, LuaHostOptions options)
    : host_(path, {"map"}, options) {
  host_.load();
}

std::optional<MapResult> SchedulerPolicy::map(const proto::NegoOfferSet& offer, int attempt,
                                              bool last_attempt,
                                              const std::vector<PendingJob>& pending,
                                              const std::optional<proto::NegoStatus>& report,
                                              double now, std::string* error) {
  MapResult result;
  auto failure = host_.call(
      "map", 2,
      [&](lua_State* L) {
        push_offer(L, offer);
        set_int(L, "attempt", attempt);
        lua_pushboolean(L, last_attempt);
        lua_setfield(L, -2, "last_attempt");
        lua_createtable(L, static_cast<int>(pending.size()), 0);
        for (std::size_t i = 0; i < pending.size(); ++i) {
          lua_createtable(L, 0, 4);
          set_int(L, "job", pending[i].job);
          set_int(L, "cores", pending[i].cores);
          set_num(L, "submit", pending[i].submit);
          set_num(L, "wait", now - pending[i].submit);
          lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
        }
        push_report(L, report);
        return 3;
      },
      [&](lua_State* L, int base) {
        if (lua_isnil(L, base)) {
          result.accepted = false;
          result.reason = optional_reason(L, base + 1);
        } else {
          result.accepted = true;
          result.mapping = read_mapping(L, base, "the mapping");
        }
      });
  set_error(error, failure);
  if (failure) return std::nullopt;
  return result;
}

}  // namespace sched::invasive
