// libpmix's server, hosted by the agent (agent_pmix.hpp). Its callbacks run
// on libpmix's progress thread and only queue what happened; the agent's
// loop acts on it. The reference for what a host gives its clients is
// PMIx v4's standard (job, node and process-level keys).
#include "agent_pmix.hpp"

#include <fcntl.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <stdexcept>

namespace sched::agent {

// A fence libpmix waits on: how to answer it, and (once answered) the data
// libpmix reads until it calls release_fence.
struct PmixServer::Fence {
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
  std::string data;
};

// A spawn, lookup or connect a rank waits on: how to answer it.
struct PmixServer::Pending {
  pmix_spawn_cbfunc_t spawn = nullptr;
  pmix_lookup_cbfunc_t lookup = nullptr;
  pmix_op_cbfunc_t op = nullptr;
  void* cbdata = nullptr;
  pmix_modex_cbfunc_t modex = nullptr;  // a fence over some ranks
};

// A connect's local data being fetched from libpmix, rank by rank.
struct PmixServer::Gather {
  std::uint64_t id = 0;
  std::size_t left = 0;
  bool ok = true;
  std::map<std::string, std::string> entries;
};

namespace {

// libpmix's callbacks carry no context of ours: the one server of the process.
PmixServer* active = nullptr;

std::runtime_error pmix_error(const std::string& what, pmix_status_t status) {
  return std::runtime_error(what + ": " + PMIx_Error_string(status));
}

void release_fence(void* cbdata) { delete static_cast<PmixServer::Fence*>(cbdata); }

void report(const pmix_proc_t* proc, PmixEvent::Kind kind, int status = 0,
            const char* msg = nullptr) {
  PmixEvent event;
  if (!active || !proc || !active->find_step(proc->nspace, event.job, event.step)) return;
  event.kind = kind;
  event.rank = static_cast<int>(proc->rank);
  event.status = status;
  if (msg) event.data = msg;
  active->push(std::move(event));
}

// The client is released at once (cbfunc from within: libpmix allows it).
pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  report(proc, PmixEvent::Kind::Connected);
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  report(proc, PmixEvent::Kind::Finalized);
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// Whatever procs it names, an abort fails the whole step (as PMI-1's).
pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  report(proc, PmixEvent::Kind::Aborted, status, msg);
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_group_fence(const pmix_proc_t procs[], size_t nprocs, char* data, size_t ndata,
                             pmix_modex_cbfunc_t cbfunc, void* cbdata);

// Every local rank of the step is in the fence; `data` is their part. A
// fence over a whole namespace (MPI_Init's, MPI_Finalize's) is the step's
// fence (pmi.fence); one over other procs (Open MPI's MPI_Comm_disconnect
// fences both sides of a spawn) goes as a connect (on_group_fence).
pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                       char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (!active || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  if (nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD) {
    return on_group_fence(procs, nprocs, data, ndata, cbfunc, cbdata);
  }
  PmixEvent event;
  if (!active->find_step(procs[0].nspace, event.job, event.step)) return PMIX_ERR_NOT_FOUND;
  auto* fence = new PmixServer::Fence{cbfunc, cbdata, {}};
  active->open_fence(event.job, event.step, fence);
  event.kind = PmixEvent::Kind::Fence;
  event.data.assign(data ? data : "", data ? ndata : 0);
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

void release_blob(void* cbdata) { delete static_cast<std::string*>(cbdata); }

// The data of a rank on another node outside a fence (direct modex): served
// for ranks a connect brought (keep_modex); Open MPI collects its own
// step's in MPI_Init's fence.
pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                              pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  std::string data;
  if (!active || !proc || !active->modex(proc->nspace, static_cast<int>(proc->rank), data)) {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  auto* blob = new std::string(std::move(data));
  cbfunc(PMIX_SUCCESS, blob->data(), blob->size(), cbdata, release_blob, blob);
  return PMIX_SUCCESS;
}

// "sched.<job>.<step>" (proto::pmix_nspace) → its job and step.
bool parse_nspace(const char* text, JobId& job, std::int64_t& step) {
  const std::string_view ns(text);
  constexpr std::string_view prefix = "sched.";
  if (!ns.starts_with(prefix)) return false;
  const std::string_view rest = ns.substr(prefix.size());
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return false;
  const auto first = std::from_chars(rest.data(), rest.data() + dot, job);
  if (first.ec != std::errc() || first.ptr != rest.data() + dot) return false;
  const auto second = std::from_chars(rest.data() + dot + 1, rest.data() + rest.size(), step);
  return second.ec == std::errc() && second.ptr == rest.data() + rest.size();
}

std::string info_string(const pmix_info_t& info) {
  return info.value.type == PMIX_STRING && info.value.data.string ? info.value.data.string : "";
}

// The host text of one app of a spawn (PMIX_HOST / PMIX_ADD_HOST).
std::string app_hosts(const pmix_app_t& app) {
  std::string hosts;
  for (std::size_t i = 0; i < app.ninfo; ++i) {
    const pmix_info_t& info = app.info[i];
    if (PMIX_CHECK_KEY(&info, PMIX_HOST) || PMIX_CHECK_KEY(&info, PMIX_ADD_HOST)) {
      const std::string text = info_string(info);
      if (!text.empty()) hosts += (hosts.empty() ? "" : ",") + text;
    }
  }
  return hosts;
}

std::vector<std::string> app_argv(const pmix_app_t& app) {
  std::vector<std::string> argv{app.cmd};
  for (char** arg = app.argv; arg && *arg; ++arg) {
    if (arg != app.argv) argv.push_back(*arg);  // argv[0] is the command's name
  }
  return argv;
}

// MPI_Comm_spawn: what to start goes to the agent's loop, which asks
// schedd; spawn_done answers. MPI_Comm_spawn_multiple's apps are one step
// when they run one command with one host each (how the malleable MPI
// layer places an expansion, sched/malleable_mpi.h): each app's processes
// go on its host ("n3:2,n4:1"); other mixes are not supported.
pmix_status_t on_spawn(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                       const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                       void* cbdata) {
  PmixEvent event;
  if (!active || !proc || !active->find_step(proc->nspace, event.job, event.step)) {
    return PMIX_ERR_NOT_FOUND;
  }
  if (napps < 1 || !apps[0].cmd) return PMIX_ERR_NOT_SUPPORTED;
  const pmix_app_t& app = apps[0];
  event.kind = PmixEvent::Kind::Spawn;
  event.rank = static_cast<int>(proc->rank);
  proto::PmixSpawn& spawn = event.spawn;
  spawn.tasks = app.maxprocs;
  spawn.argv = app_argv(app);
  spawn.hosts = app_hosts(app);
  if (napps > 1) {
    spawn.hosts.clear();
    spawn.tasks = 0;
    for (std::size_t a = 0; a < napps; ++a) {
      const std::string host = apps[a].cmd ? app_hosts(apps[a]) : "";
      if (!apps[a].cmd || app_argv(apps[a]) != spawn.argv || host.empty() ||
          host.find_first_of(",:") != std::string::npos || apps[a].maxprocs < 1) {
        return PMIX_ERR_NOT_SUPPORTED;
      }
      spawn.hosts +=
          (spawn.hosts.empty() ? "" : ",") + host + ":" + std::to_string(apps[a].maxprocs);
      spawn.tasks += apps[a].maxprocs;
    }
  }
  for (char** var = app.env; var && *var; ++var) {
    const std::string pair(*var);
    if (const auto eq = pair.find('='); eq != std::string::npos && eq > 0) {
      spawn.env[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
  }
  if (app.cwd) spawn.workdir = app.cwd;
  for (std::size_t i = 0; i < app.ninfo; ++i) {
    const pmix_info_t& info = app.info[i];
    if (PMIX_CHECK_KEY(&info, PMIX_WDIR) && !info_string(info).empty()) {
      spawn.workdir = info_string(info);
    }
  }
  event.id = active->park(new PmixServer::Pending{cbfunc, nullptr, nullptr, cbdata, nullptr});
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

// PMIx_Publish: string and byte values (Open MPI publishes its port's
// members as a string and its communicator ids as bytes) go to schedd, for
// the whole job, as text: "s:" then the string, "b:" then the bytes as Z85
// (pmix_map.hpp); "pmix." keys are libpmix's directives (range,
// persistence, the publisher's user), not data.
pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  PmixEvent event;
  if (!active || !proc || !active->find_step(proc->nspace, event.job, event.step)) {
    return PMIX_ERR_NOT_FOUND;
  }
  for (std::size_t i = 0; i < ninfo; ++i) {
    const std::string key(info[i].key);
    if (key.starts_with("pmix.")) continue;
    const pmix_value_t& value = info[i].value;
    if (value.type == PMIX_STRING) {
      event.entries[key] = "s:" + info_string(info[i]);
    } else if (value.type == PMIX_BYTE_OBJECT) {
      event.entries[key] =
          "b:" + encode_fence_blob(std::string_view(value.data.bo.bytes ? value.data.bo.bytes : "",
                                                    value.data.bo.bytes ? value.data.bo.size : 0));
    } else {
      return PMIX_ERR_NOT_SUPPORTED;
    }
  }
  event.kind = PmixEvent::Kind::Publish;
  active->push(std::move(event));
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                        size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  PmixEvent event;
  if (!active || !proc || !active->find_step(proc->nspace, event.job, event.step)) {
    return PMIX_ERR_NOT_FOUND;
  }
  for (char** key = keys; key && *key; ++key) event.keys.emplace_back(*key);
  for (std::size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) event.wait = PMIX_INFO_TRUE(&info[i]);
  }
  event.kind = PmixEvent::Kind::Lookup;
  event.id = active->park(new PmixServer::Pending{nullptr, cbfunc, nullptr, cbdata, nullptr});
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

// `procs` as a Connect event's ("<step>:<rank>" or "<step>:*", sorted);
// false for a namespace that is not a step of one job.
bool connect_procs(const pmix_proc_t procs[], size_t nprocs, PmixEvent& event) {
  for (std::size_t i = 0; i < nprocs; ++i) {
    JobId job = 0;
    std::int64_t step = 0;
    if (!parse_nspace(procs[i].nspace, job, step)) return false;
    if (event.job != 0 && job != event.job) return false;
    event.job = job;
    event.procs.push_back(
        std::to_string(step) + ":" +
        (procs[i].rank == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(procs[i].rank)));
  }
  std::sort(event.procs.begin(), event.procs.end());
  event.procs.erase(std::unique(event.procs.begin(), event.procs.end()), event.procs.end());
  return true;
}

std::string joined(const std::vector<std::string>& procs) {
  std::string out;
  for (const std::string& p : procs) out += (out.empty() ? "" : ",") + p;
  return out;
}

// Every local rank of `procs` called PMIx_Connect: a fence over the nodes
// of their steps, through schedd (pmix.connect), that also brings every
// rank's data here. Only the job's own steps can connect.
pmix_status_t on_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (!active || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  PmixEvent event;
  if (!connect_procs(procs, nprocs, event)) return PMIX_ERR_NOT_SUPPORTED;
  event.connect_id = active->next_connect_id(joined(event.procs));
  event.kind = PmixEvent::Kind::Connect;
  event.id = active->park(new PmixServer::Pending{nullptr, nullptr, cbfunc, cbdata, nullptr});
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

// A fence over some procs: a connect whose entries are each node's blob
// ("fence.<node>"), answered with all of them in key order.
pmix_status_t on_group_fence(const pmix_proc_t procs[], size_t nprocs, char* data, size_t ndata,
                             pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  PmixEvent event;
  if (!connect_procs(procs, nprocs, event)) return PMIX_ERR_NOT_SUPPORTED;
  event.connect_id = active->next_connect_id("fence:" + joined(event.procs));
  event.kind = PmixEvent::Kind::Connect;
  event.fence = true;
  event.data.assign(data ? data : "", data ? ndata : 0);
  event.id = active->park(new PmixServer::Pending{nullptr, nullptr, nullptr, cbdata, cbfunc});
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

// Nothing of ours to undo: answered at once, with no barrier across nodes.
pmix_status_t on_disconnect(const pmix_proc_t[], size_t, const pmix_info_t[], size_t,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// libpmix's answer to PMIx_server_dmodex_request for a connect's rank.
struct DmodexAsk {
  PmixServer::Gather* gather;
  std::string key;
};
void on_dmodex_data(pmix_status_t status, char* data, size_t size, void* cbdata) {
  auto* ask = static_cast<DmodexAsk*>(cbdata);
  if (active) {
    active->gathered(ask->gather, ask->key,
                     status == PMIX_SUCCESS && data ? std::string(data, size) : std::string(),
                     status == PMIX_SUCCESS);
  }
  delete ask;
}

// Waits for a libpmix operation that reports through a pmix_op_cbfunc_t.
struct OpWait {
  std::promise<pmix_status_t> done;
  static void callback(pmix_status_t status, void* cbdata) {
    static_cast<OpWait*>(cbdata)->done.set_value(status);
  }
};

// A list of pmix_info_t built with libpmix's own list helpers (they copy
// every value in).
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() { PMIx_Info_list_release(list_); }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  void add(const char* key, const void* value, pmix_data_type_t type) {
    if (const pmix_status_t rc = PMIx_Info_list_add(list_, key, value, type); rc != PMIX_SUCCESS) {
      throw pmix_error(std::string("PMIx info ") + key, rc);
    }
  }
  void add(const char* key, const std::string& value) { add(key, value.c_str(), PMIX_STRING); }
  void add_u32(const char* key, std::uint32_t value) { add(key, &value, PMIX_UINT32); }
  void add_u16(const char* key, std::uint16_t value) { add(key, &value, PMIX_UINT16); }
  void add_rank(const char* key, pmix_rank_t value) { add(key, &value, PMIX_PROC_RANK); }
  void add_bool(const char* key, bool value) { add(key, &value, PMIX_BOOL); }
  // An array of the list's entries (PMIX_PROC_DATA's value); the caller
  // destructs it.
  pmix_data_array_t convert() {
    pmix_data_array_t array;
    PMIX_DATA_ARRAY_CONSTRUCT(&array, 0, PMIX_INFO);
    if (const pmix_status_t rc = PMIx_Info_list_convert(list_, &array); rc != PMIX_SUCCESS) {
      throw pmix_error("PMIx info list", rc);
    }
    return array;
  }

 private:
  void* list_;
};

// PMIx_generate_regex / PMIx_generate_ppn, owned.
std::string generated(pmix_status_t (*generate)(const char*, char**), const std::string& input,
                      const char* what) {
  char* out = nullptr;
  if (const pmix_status_t rc = generate(input.c_str(), &out); rc != PMIX_SUCCESS || !out) {
    throw pmix_error(std::string("PMIx ") + what + " of '" + input + "'", rc);
  }
  std::string text(out);
  std::free(out);
  return text;
}

void load_proc(pmix_proc_t& proc, const std::string& nspace, int rank) {
  PMIX_PROC_CONSTRUCT(&proc);
  PMIX_PROC_LOAD(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
}

}  // namespace

PmixServer::PmixServer(const std::string& node, const std::string& tmpdir) {
  if (active) throw std::runtime_error("a PMIx server runs in this process already");
  std::error_code ec;
  std::filesystem::create_directories(tmpdir, ec);
  if (ec) throw std::runtime_error("cannot make PMIx's folder " + tmpdir + ": " + ec.message());
  // Readable by the ranks, whoever they run as (libpmix's files of a
  // namespace go here).
  ::chmod(tmpdir.c_str(), 0755);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));

  // libpmix's shared-memory store (gds ds12/ds21) belongs to one user, the
  // server's or the one it is told at init: a root agent serves ranks of
  // every user, so it keeps each namespace's data in its own memory (gds
  // hash) and ranks fetch it over their connection.
  if (::geteuid() == 0) ::setenv("PMIX_MCA_gds", "hash", 1);

  static pmix_server_module_t module{};
  module.client_connected = on_connected;
  module.client_finalized = on_finalized;
  module.abort = on_abort;
  module.fence_nb = on_fence;
  module.direct_modex = on_direct_modex;
  // MPI_Comm_spawn (docs/protocol.md §6).
  module.spawn = on_spawn;
  module.publish = on_publish;
  module.lookup = on_lookup;
  module.connect = on_connect;
  module.disconnect = on_disconnect;
  // unpublish, events, tools...: left out, libpmix answers "not supported".

  InfoList info;
  info.add(PMIX_SERVER_TMPDIR, tmpdir);
  info.add(PMIX_SYSTEM_TMPDIR, tmpdir);
  info.add(PMIX_SERVER_NSPACE, "sched-agent." + node);
  info.add_rank(PMIX_SERVER_RANK, 0);
  info.add(PMIX_HOSTNAME, node);
  // No rendezvous files for tools or the whole system: ranks find this
  // server through the variables setup_fork gives them.
  info.add_bool(PMIX_SERVER_TOOL_SUPPORT, false);
  info.add_bool(PMIX_SERVER_SYSTEM_SUPPORT, false);
  info.add_bool(PMIX_SERVER_SESSION_SUPPORT, false);
  pmix_data_array_t array = info.convert();
  active = this;
  const pmix_status_t rc =
      PMIx_server_init(&module, static_cast<pmix_info_t*>(array.array), array.size);
  PMIX_DATA_ARRAY_DESTRUCT(&array);
  if (rc != PMIX_SUCCESS) {
    active = nullptr;
    ::close(wake_fd_);
    throw pmix_error("PMIx server", rc);
  }
}

PmixServer::~PmixServer() {
  PMIx_server_finalize();
  active = nullptr;
  for (auto& [step, fence] : fences_) delete fence;
  for (auto& [id, pending] : pending_) delete pending;
  ::close(wake_fd_);
}

std::string PmixServer::nspace(JobId job, std::int64_t step) {
  return proto::pmix_nspace(job, step);
}

void PmixServer::add_remote(JobId job, std::int64_t step, const PmixMap& map,
                            const std::optional<std::string>& parent) {
  const std::string ns = nspace(job, step);
  {
    std::lock_guard lock(mutex_);
    if (steps_.count(ns) || remote_.count(ns)) return;
  }
  register_nspace(job, step, map, -1, parent);
  std::lock_guard lock(mutex_);
  remote_.insert(ns);
}

std::uint64_t PmixServer::park(Pending* pending) {
  std::lock_guard lock(mutex_);
  pending_[++next_id_] = pending;
  return next_id_;
}

PmixServer::Pending* PmixServer::take(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = pending_.find(id);
  if (it == pending_.end()) return nullptr;
  Pending* pending = it->second;
  pending_.erase(it);
  return pending;
}

std::string PmixServer::next_connect_id(const std::string& procs) {
  std::lock_guard lock(mutex_);
  return procs + "#" + std::to_string(++connects_[procs]);
}

void PmixServer::spawn_done(std::uint64_t id, const std::optional<std::string>& children) {
  std::unique_ptr<Pending> pending(take(id));
  if (!pending || !pending->spawn) return;
  if (children) {
    pmix_nspace_t name;
    PMIX_LOAD_NSPACE(name, children->c_str());
    pending->spawn(PMIX_SUCCESS, name, pending->cbdata);
  } else {
    pending->spawn(PMIX_ERR_JOB_FAILED_TO_LAUNCH, nullptr, pending->cbdata);
  }
}

void PmixServer::lookup_done(std::uint64_t id, const std::map<std::string, std::string>& entries) {
  std::unique_ptr<Pending> pending(take(id));
  if (!pending || !pending->lookup) return;
  pmix_pdata_t* data = nullptr;
  const std::size_t n = entries.size();
  if (n > 0) PMIX_PDATA_CREATE(data, n);
  std::size_t i = 0;
  for (const auto& [key, value] : entries) {
    PMIX_LOAD_KEY(data[i].key, key.c_str());
    // As on_publish wrote it.
    if (value.starts_with("b:")) {
      std::string bytes = decode_fence_blob(std::string_view(value).substr(2)).value_or("");
      pmix_byte_object_t bo;
      bo.bytes = bytes.data();
      bo.size = bytes.size();
      PMIx_Value_load(&data[i].value, &bo, PMIX_BYTE_OBJECT);
    } else {
      const std::string text = value.starts_with("s:") ? value.substr(2) : value;
      PMIx_Value_load(&data[i].value, text.c_str(), PMIX_STRING);
    }
    ++i;
  }
  // libpmix packs the data before the callback returns.
  pending->lookup(n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, data, n, pending->cbdata);
  if (data) PMIX_PDATA_FREE(data, n);
}

void PmixServer::gather(std::uint64_t id, const std::vector<std::pair<std::string, int>>& procs) {
  auto* g = new Gather{id, procs.size() + 1, true, {}};  // + 1: held until every ask is out
  for (const auto& [ns, rank] : procs) {
    JobId job = 0;
    std::int64_t step = 0;
    parse_nspace(ns.c_str(), job, step);
    auto* ask = new DmodexAsk{g, std::to_string(step) + "." + std::to_string(rank)};
    pmix_proc_t proc;
    load_proc(proc, ns, rank);
    if (PMIx_server_dmodex_request(&proc, on_dmodex_data, ask) != PMIX_SUCCESS) {
      gathered(g, ask->key, {}, false);
      delete ask;
    }
  }
  gathered(g, {}, {}, true);
}

void PmixServer::gathered(Gather* g, const std::string& key, std::string data, bool ok) {
  PmixEvent event;
  {
    std::lock_guard lock(mutex_);
    if (!key.empty()) {
      if (ok) g->entries[key] = encode_fence_blob(data);
      g->ok = g->ok && ok;
    }
    if (--g->left > 0) return;
    event.kind = PmixEvent::Kind::ConnectReady;
    event.id = g->id;
    event.status = g->ok ? 0 : 1;
    event.entries = std::move(g->entries);
  }
  delete g;
  push(std::move(event));
}

void PmixServer::keep_modex(JobId job, const std::map<std::string, std::string>& entries) {
  std::lock_guard lock(mutex_);
  for (const auto& [key, value] : entries) {
    const std::size_t dot = key.find('.');
    const auto blob = decode_fence_blob(value);
    if (dot == std::string::npos || !blob) continue;
    const std::int64_t step = std::atoll(key.substr(0, dot).c_str());
    modex_[{nspace(job, step), std::atoi(key.c_str() + dot + 1)}] = *blob;
  }
}

bool PmixServer::modex(const std::string& ns, int rank, std::string& data) {
  std::lock_guard lock(mutex_);
  const auto it = modex_.find({ns, rank});
  if (it == modex_.end()) return false;
  data = it->second;
  return true;
}

void PmixServer::connect_done(std::uint64_t id, bool ok, const std::string& fence_data) {
  std::unique_ptr<Pending> pending(take(id));
  if (pending && pending->op) pending->op(ok ? PMIX_SUCCESS : PMIX_ERROR, pending->cbdata);
  if (pending && pending->modex) {
    // libpmix reads the data until it calls release_blob.
    auto* blob = new std::string(ok ? fence_data : std::string());
    pending->modex(ok ? PMIX_SUCCESS : PMIX_ERROR, blob->data(), blob->size(), pending->cbdata,
                   release_blob, blob);
  }
}

void PmixServer::register_nspace(JobId job, std::int64_t step, const PmixMap& map, int node,
                                 const std::optional<std::string>& parent) {
  const std::string ns = nspace(job, step);
  {
    // The job's level: its size, where every rank is (node and process
    // maps), and this node's part (none: node -1).
    const auto size = static_cast<std::uint32_t>(map.node_of_rank.size());
    const std::vector<int> local = node >= 0 ? map.ranks_on(node) : std::vector<int>{};
    InfoList info;
    info.add_u32(PMIX_UNIV_SIZE, size);
    info.add_u32(PMIX_JOB_SIZE, size);
    info.add_u32(PMIX_MAX_PROCS, size);
    info.add_u32(PMIX_APP_SIZE, size);
    info.add_u32(PMIX_APPNUM, 0);
    info.add(PMIX_JOBID, ns);
    info.add_u32(PMIX_NUM_NODES, static_cast<std::uint32_t>(map.nodes.size()));
    info.add(PMIX_NODE_MAP, generated(PMIx_generate_regex, map.node_list(), "node map"));
    info.add(PMIX_PROC_MAP, generated(PMIx_generate_ppn, map.ppn(), "process map"));
    if (node >= 0) {
      info.add(PMIX_HOSTNAME, map.nodes[static_cast<std::size_t>(node)]);
      info.add_u32(PMIX_NODEID, static_cast<std::uint32_t>(node));
      info.add_u32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local.size()));
      info.add_u32(PMIX_NODE_SIZE, static_cast<std::uint32_t>(local.size()));
      info.add(PMIX_LOCAL_PEERS, map.peers(node));
      if (!local.empty()) info.add_rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(local.front()));
    }
    if (parent) {
      // A spawned step: who spawned it (Open MPI's children find their
      // parent's port in their environment, OMPI_PARENT_PORT).
      const std::size_t colon = parent->rfind(':');
      pmix_proc_t spawner;
      load_proc(spawner, parent->substr(0, colon),
                colon == std::string::npos ? 0 : std::atoi(parent->c_str() + colon + 1));
      info.add(PMIX_PARENT_ID, &spawner, PMIX_PROC);
      info.add_bool(PMIX_SPAWNED, true);
    }
    // Each rank's own level: where it is and its place there.
    for (std::uint32_t r = 0; r < size; ++r) {
      const int on = map.node_of_rank[r];
      InfoList proc;
      proc.add_rank(PMIX_RANK, r);
      proc.add_u32(PMIX_APPNUM, 0);
      proc.add_rank(PMIX_APPLDR, 0);
      proc.add_rank(PMIX_GLOBAL_RANK, r);
      proc.add_rank(PMIX_APP_RANK, r);
      proc.add_u16(PMIX_LOCAL_RANK,
                   static_cast<std::uint16_t>(map.local_rank(static_cast<int>(r))));
      proc.add_u16(PMIX_NODE_RANK, static_cast<std::uint16_t>(map.local_rank(static_cast<int>(r))));
      proc.add_u32(PMIX_NODEID, static_cast<std::uint32_t>(on));
      proc.add(PMIX_HOSTNAME, map.nodes[static_cast<std::size_t>(on)]);
      pmix_data_array_t array = proc.convert();
      info.add(PMIX_PROC_DATA, &array, PMIX_DATA_ARRAY);
      PMIX_DATA_ARRAY_DESTRUCT(&array);
    }
    pmix_data_array_t array = info.convert();
    OpWait wait;
    auto done = wait.done.get_future();
    pmix_nspace_t name;
    PMIX_LOAD_NSPACE(name, ns.c_str());
    pmix_status_t rc = PMIx_server_register_nspace(name, static_cast<int>(local.size()),
                                                   static_cast<pmix_info_t*>(array.array),
                                                   array.size, OpWait::callback, &wait);
    if (rc == PMIX_SUCCESS) rc = done.get();
    PMIX_DATA_ARRAY_DESTRUCT(&array);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
      throw pmix_error("PMIx namespace " + ns, rc);
    }
  }
}

void PmixServer::add_rank(JobId job, std::int64_t step, const PmixMap& map, int node, int rank,
                          uid_t uid, gid_t gid, EnvPairs& env,
                          const std::optional<std::string>& parent) {
  const std::string ns = nspace(job, step);
  bool known;
  {
    std::lock_guard lock(mutex_);
    known = steps_.count(ns) > 0;
  }
  if (!known) {
    register_nspace(job, step, map, node, parent);
    std::lock_guard lock(mutex_);
    steps_[ns] = {job, step};
  }
  pmix_proc_t proc;
  load_proc(proc, ns, rank);
  OpWait wait;
  auto done = wait.done.get_future();
  pmix_status_t rc = PMIx_server_register_client(&proc, uid, gid, nullptr, OpWait::callback, &wait);
  if (rc == PMIX_SUCCESS) rc = done.get();
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    throw pmix_error("PMIx client " + ns + " rank " + std::to_string(rank), rc);
  }
  char** vars = static_cast<char**>(std::calloc(1, sizeof(char*)));
  rc = PMIx_server_setup_fork(&proc, &vars);
  for (char** v = vars; v && *v; ++v) {
    const std::string pair(*v);
    if (const auto eq = pair.find('='); eq != std::string::npos) {
      set_env(env, pair.substr(0, eq), pair.substr(eq + 1));
    }
    std::free(*v);
  }
  std::free(vars);
  if (rc != PMIX_SUCCESS) throw pmix_error("PMIx environment of rank " + std::to_string(rank), rc);
}

void PmixServer::drop_step(JobId job, std::int64_t step) {
  const std::string ns = nspace(job, step);
  Fence* open = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!steps_.erase(ns)) return;
    if (auto it = fences_.find({job, step}); it != fences_.end()) {
      open = it->second;
      fences_.erase(it);
    }
  }
  if (open) {
    open->cbfunc(PMIX_ERR_TIMEOUT, nullptr, 0, open->cbdata, nullptr, nullptr);
    delete open;
  }
  pmix_nspace_t name;
  PMIX_LOAD_NSPACE(name, ns.c_str());
  OpWait wait;
  auto done = wait.done.get_future();
  PMIx_server_deregister_nspace(name, OpWait::callback, &wait);
  done.wait();
}

bool PmixServer::fence_done(JobId job, std::int64_t step, std::string data) {
  Fence* fence = nullptr;
  {
    std::lock_guard lock(mutex_);
    const auto it = fences_.find({job, step});
    if (it == fences_.end()) return false;
    fence = it->second;
    fences_.erase(it);
  }
  fence->data = std::move(data);
  // libpmix reads the data until it calls release_fence, which frees it.
  fence->cbfunc(PMIX_SUCCESS, fence->data.data(), fence->data.size(), fence->cbdata, release_fence,
                fence);
  return true;
}

std::vector<PmixEvent> PmixServer::take_events() {
  std::uint64_t count;
  while (::read(wake_fd_, &count, sizeof count) > 0) {
  }
  std::lock_guard lock(mutex_);
  return std::exchange(events_, {});
}

void PmixServer::push(PmixEvent event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

bool PmixServer::find_step(const char* ns, JobId& job, std::int64_t& step) {
  std::lock_guard lock(mutex_);
  const auto it = steps_.find(ns);
  if (it == steps_.end()) return false;
  job = it->second.first;
  step = it->second.second;
  return true;
}

void PmixServer::open_fence(JobId job, std::int64_t step, Fence* fence) {
  std::lock_guard lock(mutex_);
  delete std::exchange(fences_[{job, step}], fence);  // a rank cannot be in two fences
}

}  // namespace sched::agent
