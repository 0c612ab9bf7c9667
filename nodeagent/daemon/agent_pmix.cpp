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

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <stdexcept>

namespace sched::agent {

// A fence libpmix waits on: how to answer it, and (once answered) the data
// libpmix reads until it calls release_fence.
struct PmixServer::Fence {
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
  std::string data;
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

// Every local rank of the step is in the fence; `data` is their part. Only
// fences over the whole namespace are relayed (what MPI_Init and
// MPI_Finalize do); fences over some ranks would need their own matching.
pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                       char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (!active || nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD) return PMIX_ERR_NOT_SUPPORTED;
  PmixEvent event;
  if (!active->find_step(procs[0].nspace, event.job, event.step)) return PMIX_ERR_NOT_FOUND;
  auto* fence = new PmixServer::Fence{cbfunc, cbdata, {}};
  active->open_fence(event.job, event.step, fence);
  event.kind = PmixEvent::Kind::Fence;
  event.data.assign(data ? data : "", data ? ndata : 0);
  active->push(std::move(event));
  return PMIX_SUCCESS;
}

// The data of a rank on another node outside a fence (direct modex): not
// served; Open MPI collects everything in MPI_Init's fence by default.
pmix_status_t on_direct_modex(const pmix_proc_t*, const pmix_info_t[], size_t, pmix_modex_cbfunc_t,
                              void*) {
  return PMIX_ERR_NOT_SUPPORTED;
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
  // spawn, publish, connect...: left out, libpmix answers "not supported".

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
  ::close(wake_fd_);
}

std::string PmixServer::nspace(JobId job, std::int64_t step) {
  return "sched." + std::to_string(job) + "." + std::to_string(step);
}

void PmixServer::add_rank(JobId job, std::int64_t step, const PmixMap& map, int node, int rank,
                          uid_t uid, gid_t gid, EnvPairs& env) {
  const std::string ns = nspace(job, step);
  bool known;
  {
    std::lock_guard lock(mutex_);
    known = steps_.count(ns) > 0;
  }
  if (!known) {
    // The job's level: its size, where every rank is (node and process
    // maps), and this node's part.
    const auto size = static_cast<std::uint32_t>(map.node_of_rank.size());
    const std::vector<int> local = map.ranks_on(node);
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
    info.add(PMIX_HOSTNAME, map.nodes[static_cast<std::size_t>(node)]);
    info.add_u32(PMIX_NODEID, static_cast<std::uint32_t>(node));
    info.add_u32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local.size()));
    info.add_u32(PMIX_NODE_SIZE, static_cast<std::uint32_t>(local.size()));
    info.add(PMIX_LOCAL_PEERS, map.peers(node));
    if (!local.empty()) info.add_rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(local.front()));
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
