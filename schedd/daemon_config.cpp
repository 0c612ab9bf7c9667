#include "daemon_config.hpp"

#include <toml++/toml.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>

#include "sched/daemon_log.hpp"
#include "sched/install_layout.hpp"
#include "sched/policy_host.hpp"
#include "sched/tasks/nodelist.hpp"

namespace sched::daemon {
namespace {

[[noreturn]] void fail(const std::string& file, const std::string& key, const std::string& what) {
  throw std::runtime_error(file + ": " + key + ": " + what);
}

// One table's keys: each known key has a reader; anything else is an error.
using Reader = std::function<void(const toml::node&, const std::string& key)>;

void read_table(const toml::table& table, const std::string& name, const std::string& file,
                const std::map<std::string, Reader>& readers) {
  for (const auto& [key, node] : table) {
    const std::string full = name + "." + std::string(key.str());
    auto it = readers.find(std::string(key.str()));
    if (it == readers.end()) fail(file, full, "unknown key");
    it->second(node, full);
  }
}

Reader text(std::string& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    if (!node.is_string()) fail(file, key, "expected a string");
    out = node.value<std::string>().value();
  };
}

Reader number(double& out, const std::string& file, double min) {
  return [&out, file, min](const toml::node& node, const std::string& key) {
    if (!node.is_number()) fail(file, key, "expected a number");
    const double value = node.value<double>().value();
    if (!(value >= min)) fail(file, key, "must be at least " + std::to_string(min));
    out = value;
  };
}

Reader flag(bool& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    if (!node.is_boolean()) fail(file, key, "expected true or false");
    out = node.value<bool>().value();
  };
}

Reader count(int& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    if (!node.is_integer() || node.value<std::int64_t>().value() < 0 ||
        node.value<std::int64_t>().value() > 1'000'000) {
      fail(file, key, "expected an integer from 0 to 1000000");
    }
    out = static_cast<int>(node.value<std::int64_t>().value());
  };
}

Reader page_items(std::size_t& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    if (!node.is_integer() || node.value<std::int64_t>().value() < 1 ||
        node.value<std::int64_t>().value() > 1'000'000) {
      fail(file, key, "expected an integer from 1 to 1000000");
    }
    out = static_cast<std::size_t>(node.value<std::int64_t>().value());
  };
}

Reader bytes(std::size_t& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    if (!node.is_integer() || node.value<std::int64_t>().value() < 1024) {
      fail(file, key, "expected an integer of at least 1024");
    }
    out = static_cast<std::size_t>(node.value<std::int64_t>().value());
  };
}

ParamValue param(const toml::node& node, const std::string& file, const std::string& key) {
  if (node.is_boolean()) return node.value<bool>().value();
  if (node.is_integer()) return static_cast<long long>(node.value<std::int64_t>().value());
  if (node.is_floating_point()) return node.value<double>().value();
  if (node.is_string()) return node.value<std::string>().value();
  fail(file, key, "a policy parameter must be a boolean, number or string");
}

Reader names(std::vector<std::string>& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    const toml::array* list = node.as_array();
    if (!list) fail(file, key, "expected an array of names");
    out.clear();
    for (const toml::node& name : *list) {
      if (!name.is_string() || name.value<std::string>()->empty()) {
        fail(file, key, "expected an array of names");
      }
      out.push_back(*name.value<std::string>());
    }
  };
}

Reader limit_time(double& out, const std::string& file) {
  return [&out, file](const toml::node& node, const std::string& key) {
    std::optional<double> seconds;
    if (node.is_integer() && node.value<std::int64_t>().value() >= 0) {
      seconds = static_cast<double>(node.value<std::int64_t>().value()) * 60;  // Slurm: minutes
    } else if (node.is_string()) {
      seconds = parse_partition_time(node.value<std::string>().value());
    }
    if (!seconds) {
      fail(file, key,
           "expected minutes, \"[D-]HH:MM:SS\" (or MM:SS, D-HH, D-HH:MM) or \"UNLIMITED\"");
    }
    out = *seconds;
  };
}

// [partitions.NAME.negotiation] (issue 20 items 3, 5).
DaemonConfig::NegotiationConfig read_negotiation(const toml::table& table, const std::string& key,
                                                 const std::string& file) {
  DaemonConfig::NegotiationConfig n;
  read_table(table, key, file,
             {{"hypervisor_policy", text(n.hypervisor_policy, file)},
              {"scheduler_policy", text(n.scheduler_policy, file)},
              {"endpoint", text(n.endpoint, file)},
              {"scheduler",
               [&](const toml::node& v, const std::string& vkey) {
                 const auto s = v.value<std::string>();
                 if (!s || (*s != "internal" && *s != "external")) {
                   fail(file, vkey, "expected \"internal\" or \"external\"");
                 }
                 n.scheduler = *s;
               }},
              {"max_attempts", count(n.max_attempts, file)},
              {"timeout_s", number(n.timeout_s, file, 0.001)},
              {"status_interval_s", number(n.status_interval_s, file, 0)}});
  if (n.max_attempts < 1) fail(file, key + ".max_attempts", "must be at least 1");
  if (n.hypervisor_policy.empty()) fail(file, key + ".hypervisor_policy", "must name a policy");
  if (n.scheduler_policy.empty()) fail(file, key + ".scheduler_policy", "must name a policy");
  return n;
}

// [partitions.NAME] tables (issue 20 item 1).
void read_partitions(const toml::table& table, const std::string& file, DaemonConfig& c) {
  for (const auto& [name, node] : table) {
    const std::string n(name.str());
    const std::string key = "partitions." + n;
    if (!node.is_table()) fail(file, key, "expected a table");
    DaemonConfig::PartitionConfig p;
    p.spec.name = n;
    p.params = c.params;  // [scheduler.params] unless the partition says otherwise
    PolicyParams own;
    PartitionLimits& l = p.spec.limits;
    read_table(*node.as_table(), key, file,
               {{"nodes",
                 [&](const toml::node& v, const std::string& vkey) {
                   std::vector<std::string> lists;
                   if (v.is_string()) {
                     lists.push_back(*v.value<std::string>());
                   } else if (const toml::array* list = v.as_array()) {
                     for (const toml::node& item : *list) {
                       if (!item.is_string()) fail(file, vkey, "expected host lists");
                       lists.push_back(*item.value<std::string>());
                     }
                   } else {
                     fail(file, vkey, "expected a host list (\"n[1-4],gpu1\") or an array of them");
                   }
                   for (const std::string& text : lists) {
                     try {
                       for (std::string& node_name : tasks::expand_nodelist(text)) {
                         p.spec.nodes.push_back(std::move(node_name));
                       }
                     } catch (const std::invalid_argument& e) {
                       fail(file, vkey, e.what());
                     }
                   }
                 }},
                {"policy", text(p.policy, file)},
                {"params",
                 [&](const toml::node& v, const std::string& vkey) {
                   if (!v.is_table()) fail(file, vkey, "expected a table");
                   for (const auto& [pname, value] : *v.as_table()) {
                     const std::string pn(pname.str());
                     own[pn] = param(value, file, vkey + "." + pn);
                   }
                 }},
                {"default", flag(p.spec.is_default, file)},
                {"state",
                 [&](const toml::node& v, const std::string& vkey) {
                   const auto s = v.value<std::string>();
                   const auto state = s ? parse_partition_state(*s) : std::nullopt;
                   if (!state) fail(file, vkey, "expected \"up\", \"drain\" or \"down\"");
                   p.spec.state = *state;
                 }},
                {"kind",
                 [&](const toml::node& v, const std::string& vkey) {
                   const auto k = v.value<std::string>();
                   const auto kind = k ? parse_partition_kind(*k) : std::nullopt;
                   if (!kind) fail(file, vkey, "expected \"nodes\" or \"cores\"");
                   p.spec.kind = *kind;
                 }},
                {"max_time", limit_time(l.max_time_s, file)},
                {"default_time", limit_time(l.default_time_s, file)},
                {"max_nodes", count(l.max_nodes, file)},
                {"users", names(l.users, file)},
                {"groups", names(l.groups, file)},
                {"negotiation", [&](const toml::node& v, const std::string& vkey) {
                   if (!v.is_table()) fail(file, vkey, "expected a table");
                   p.negotiation = read_negotiation(*v.as_table(), vkey, file);
                 }}});
    if (p.negotiation) {
      if (p.spec.kind != PartitionKind::Cores) {
        fail(file, key + ".negotiation", "only a partition of kind = \"cores\" is negotiated");
      }
      if (!p.policy.empty()) {
        fail(file, key + ".policy",
             "a negotiated partition is scheduled by its negotiation, not by a policy");
      }
    }
    for (auto& [pn, value] : own) p.params[pn] = std::move(value);
    c.partitions.push_back(std::move(p));
  }
}

}  // namespace

std::optional<double> parse_partition_time(const std::string& text) {
  if (text == "UNLIMITED" || text == "INFINITE" || text == "unlimited" || text == "infinite") {
    return 0.0;
  }
  long long days = 0;
  std::string rest = text;
  const auto dash = text.find('-');
  if (dash != std::string::npos) {
    const std::string d = text.substr(0, dash);
    if (d.empty() || d.size() > 6 || d.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    days = std::stoll(d);
    rest = text.substr(dash + 1);
  }
  std::vector<long long> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = rest.find(':', start);
    const std::string part = rest.substr(start, colon - start);
    if (part.empty() || part.size() > 8 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    parts.push_back(std::stoll(part));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  long long seconds = 0;
  if (dash != std::string::npos) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) +
              (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;  // MM
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];  // MM:SS
  } else {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];  // HH:MM:SS
  }
  return static_cast<double>(days * 86400 + seconds);
}

DaemonConfig load_config(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw std::runtime_error(path + ":" + std::to_string(where.line) + ":" +
                             std::to_string(where.column) + ": " + std::string(e.description()));
  }
  DaemonConfig c;
  const std::string& f = path;
  std::map<std::string, Reader> sections;
  sections["server"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"client_endpoint", text(c.client_endpoint, f)},
                {"agent_endpoint", text(c.agent_endpoint, f)},
                {"event_endpoint", text(c.event_endpoint, f)},
                {"state_dir", text(c.state_dir, f)},
                {"max_message_bytes", bytes(c.max_message_bytes, f)},
                {"max_page_items", page_items(c.max_page_items, f)}});
  };
  sections["scheduler"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"tick_s", number(c.tick_s, f, 0.01)},
                {"policy", text(c.policy, f)},
                {"policy_dir", text(c.policy_dir, f)},
                {"policy_check_s", number(c.policy_check_s, f, 0.01)},
                {"adapt_timeout_s", number(c.adapt_timeout_s, f, 0.01)},
                {"adapt_backoff_s", number(c.adapt_backoff_s, f, 0)},
                {"mtct_window_s", number(c.mtct_window_s, f, 0)},
                {"mtct_refresh_fraction", number(c.mtct_refresh_fraction, f, 0)},
                {"kill_invalid_depend", flag(c.kill_invalid_depend, f)},
                // ---- job arrays (issue 18 item 1)
                {"max_array_size", count(c.max_array_size, f)},
                {"min_job_age_s", number(c.min_job_age_s, f, 0)},
                {"params", [&](const toml::node& p, const std::string& pkey) {
                   if (!p.is_table()) fail(f, pkey, "expected a table");
                   for (const auto& [name, value] : *p.as_table()) {
                     const std::string n(name.str());
                     c.params[n] = param(value, f, pkey + "." + n);
                   }
                 }}});
  };
  // ---- priority (issue 18 item 5)
  sections["priority"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    PriorityConfig& p = c.priority;
    read_table(*node.as_table(), key, f,
               {{"weight_age", number(p.weights.age, f, 0)},
                {"weight_fairshare", number(p.weights.fairshare, f, 0)},
                {"weight_jobsize", number(p.weights.jobsize, f, 0)},
                {"weight_qos", number(p.weights.qos, f, 0)},
                {"max_age_s", number(p.max_age_s, f, 0)},
                {"decay_half_life_s", number(p.decay_half_life_s, f, 0)},
                {"calc_period_s", number(p.calc_period_s, f, 0.01)},
                {"shares", [&](const toml::node& v, const std::string& vkey) {
                   if (!v.is_table()) fail(f, vkey, "expected a table of user = shares");
                   for (const auto& [user, shares] : *v.as_table()) {
                     const std::string u(user.str());
                     if (!shares.is_number() || !(shares.value<double>().value() > 0)) {
                       fail(f, vkey + "." + u, "expected a number above 0");
                     }
                     p.shares[u] = shares.value<double>().value();
                   }
                 }}});
  };
  sections["qos"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table of [qos.NAME] tables");
    for (const auto& [name, table] : *node.as_table()) {
      const std::string n(name.str());
      if (!table.is_table()) fail(f, key + "." + n, "expected a table");
      std::int64_t priority = 0;
      read_table(*table.as_table(), key + "." + n, f,
                 {{"priority", [&](const toml::node& v, const std::string& vkey) {
                     if (!v.is_integer() || v.value<std::int64_t>().value() < 0 ||
                         v.value<std::int64_t>().value() > 1'000'000'000) {
                       fail(f, vkey, "expected an integer from 0 to 1000000000");
                     }
                     priority = v.value<std::int64_t>().value();
                   }}});
      c.priority.qos[n] = priority;
    }
  };
  sections["policy"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"time_limit_s", number(c.policy_time_limit_s, f, 0)},
                {"revert_after_failures", count(c.policy_revert_after_failures, f)}});
  };
  sections["nodes"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"heartbeat_s", number(c.heartbeat_s, f, 0.01)},
                {"down_after_s", number(c.down_after_s, f, 0.01)},
                {"kill_grace_s", number(c.kill_grace_s, f, 0)},
                {"kill_timeout_s", number(c.kill_timeout_s, f, 0.01)},
                {"fence_timeout_s", number(c.fence_timeout_s, f, 0)},
                {"on_failure", [&](const toml::node& v, const std::string& vkey) {
                   const auto s = v.value<std::string>();
                   if (s == "fail") {
                     c.on_failure = NodeFailureAction::Fail;
                   } else if (s == "requeue") {
                     c.on_failure = NodeFailureAction::Requeue;
                   } else {
                     fail(f, vkey, "expected \"fail\" or \"requeue\"");
                   }
                 }}});
  };
  sections["auth"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"type",
                 [&](const toml::node& v, const std::string& vkey) {
                   if (v.value<std::string>() != "munge") fail(f, vkey, "expected \"munge\"");
                   c.auth_type = "munge";
                 }},
                {"socket", text(c.munge_socket, f)},
                {"session_ttl_s", number(c.session_ttl_s, f, 1)},
                {"admins", [&](const toml::node& v, const std::string& vkey) {
                   const toml::array* list = v.as_array();
                   if (!list) fail(f, vkey, "expected an array of user names");
                   c.admins.clear();
                   for (const toml::node& name : *list) {
                     if (!name.is_string() || name.value<std::string>()->empty()) {
                       fail(f, vkey, "expected an array of user names");
                     }
                     c.admins.push_back(*name.value<std::string>());
                   }
                 }}});
  };
  sections["urgent"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"users", [&](const toml::node& v, const std::string& vkey) {
                   const toml::array* list = v.as_array();
                   if (!list) fail(f, vkey, "expected an array of user names");
                   c.urgent_users.clear();
                   for (const toml::node& name : *list) {
                     if (!name.is_string() || name.value<std::string>()->empty()) {
                       fail(f, vkey, "expected an array of user names");
                     }
                     c.urgent_users.push_back(*name.value<std::string>());
                   }
                 }}});
  };
  sections["limits"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(
        *node.as_table(), key, f,
        {{"max_pending_jobs_per_user", count(c.max_pending_jobs_per_user, f)},
         {"submissions_per_second_per_user", number(c.submissions_per_second_per_user, f, 0)},
         {"submission_burst_per_user", count(c.submission_burst_per_user, f)}});
  };
  sections["security"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"secret_key_file", text(c.secret_key_file, f)},
                {"authorized_agents_file", text(c.authorized_agents_file, f)}});
  };
  sections["jobs"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"allow_root_jobs", flag(c.allow_root_jobs, f)},
                {"mpi_default", [&](const toml::node& v, const std::string& vkey) {
                   const auto s = v.value<std::string>();
                   if (s != "none" && s != "pmi2" && s != "pmi1" && s != "pmix") {
                     fail(f, vkey, "expected \"none\", \"pmi2\", \"pmi1\" or \"pmix\"");
                   }
                   c.mpi_default = *s;
                 }}});
  };
  sections["power"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"idle_w_per_node", number(c.idle_w_per_node, f, 0)},
                {"corridor_lower_w", number(c.corridor_lower_w, f, 0)},
                {"corridor_upper_w", number(c.corridor_upper_w, f, 0)}});
  };
  // ---- issue 19
  sections["log"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f,
               {{"level",
                 [&](const toml::node& v, const std::string& vkey) {
                   const auto level = v.value<std::string>();
                   if (!level || !layout::valid_log_level(*level)) {
                     fail(f, vkey,
                          "expected \"trace\", \"debug\", \"info\", \"warn\" or \"error\"");
                   }
                   c.log_level = *level;
                 }},
                {"file", text(c.log_file, f)}});
  };
  sections["http"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected a table");
    read_table(*node.as_table(), key, f, {{"listen", text(c.http_listen, f)}});
    if (auto problem = http_listen_problem(c.http_listen)) fail(f, "http.listen", *problem);
  };
  // ---- partitions (issue 20 item 1): read after [scheduler], whose params
  // they start from.
  sections["partitions"] = [&](const toml::node& node, const std::string& key) {
    if (!node.is_table()) fail(f, key, "expected [partitions.NAME] tables");
  };
  for (const auto& [key, node] : root) {
    const std::string name(key.str());
    auto it = sections.find(name);
    if (it == sections.end()) fail(f, name, "unknown section");
    it->second(node, name);
  }
  if (const toml::node* partitions = root.get("partitions")) {
    if (!partitions->is_table()) fail(f, "partitions", "expected [partitions.NAME] tables");
    read_partitions(*partitions->as_table(), f, c);
    std::vector<PartitionSpec> specs;
    for (const auto& p : c.partitions) specs.push_back(p.spec);
    if (auto error = check_partitions(specs)) fail(f, "partitions", *error);
  }
  if (c.down_after_s <= c.heartbeat_s) {
    fail(f, "nodes.down_after_s", "must be longer than nodes.heartbeat_s");
  }
  if (c.corridor_upper_w < c.corridor_lower_w) {
    fail(f, "power.corridor_upper_w", "must not be below power.corridor_lower_w");
  }
  return c;
}

void complete_config(DaemonConfig& config) {
  if (config.state_dir.empty()) {
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {
      config.state_dir = std::string(xdg) + "/sched";
    } else if (const char* home = std::getenv("HOME"); home && *home) {
      config.state_dir = std::string(home) + "/.local/state/sched";
    } else {
      config.state_dir = "./sched-state";
    }
  }
  // ---- issue 19: an installed schedd defaults to its prefix's policies
  if (config.policy_dir.empty()) config.policy_dir = layout::policy_dir_or(default_policy_dir());
  if (config.secret_key_file.empty()) config.secret_key_file = default_secret_key_file(config);
  if (config.authorized_agents_file.empty()) {
    config.authorized_agents_file = default_authorized_agents_file(config);
  }
}

std::string default_secret_key_file(const DaemonConfig& config) {
  return config.state_dir + "/keys/schedd.key";
}

std::string default_authorized_agents_file(const DaemonConfig& config) {
  return config.state_dir + "/keys/authorized_agents";
}

}  // namespace sched::daemon

namespace sched::daemon {

std::optional<std::string> http_listen_problem(const std::string& listen) {
  if (listen.empty()) return std::nullopt;  // off
  const auto colon = listen.rfind(':');
  const std::string port = colon == std::string::npos ? "" : listen.substr(colon + 1);
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  if (colon == 0 || !digits || std::stoi(port) > 65535) {
    return "expected \"HOST:PORT\" (e.g. \"127.0.0.1:9180\"; port 0: any free one), got \"" +
           listen + "\"";
  }
  return std::nullopt;
}

}  // namespace sched::daemon
