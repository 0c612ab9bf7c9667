#include "config_reload.hpp"

namespace sched::daemon {
namespace {

bool same(const PriorityConfig& a, const PriorityConfig& b) {
  return a.weights.age == b.weights.age && a.weights.fairshare == b.weights.fairshare &&
         a.weights.jobsize == b.weights.jobsize && a.weights.qos == b.weights.qos &&
         a.max_age_s == b.max_age_s && a.decay_half_life_s == b.decay_half_life_s &&
         a.calc_period_s == b.calc_period_s && a.qos == b.qos && a.shares == b.shares;
}

}  // namespace

std::vector<std::string> apply_live_config(DaemonConfig& running, const DaemonConfig& fresh,
                                           std::vector<std::string>& restart) {
  std::vector<std::string> applied;
  auto live = [&](const char* key, auto& now, const auto& then) {
    if (now == then) return;
    now = then;
    applied.emplace_back(key);
  };
  live("log.level", running.log_level, fresh.log_level);
  live("log.file", running.log_file, fresh.log_file);
  live("scheduler.tick_s", running.tick_s, fresh.tick_s);
  live("scheduler.policy_check_s", running.policy_check_s, fresh.policy_check_s);
  live("limits.max_pending_jobs_per_user", running.max_pending_jobs_per_user,
       fresh.max_pending_jobs_per_user);
  live("limits.submissions_per_second_per_user", running.submissions_per_second_per_user,
       fresh.submissions_per_second_per_user);
  live("limits.submission_burst_per_user", running.submission_burst_per_user,
       fresh.submission_burst_per_user);
  live("auth.admins", running.admins, fresh.admins);
  live("auth.session_ttl_s", running.session_ttl_s, fresh.session_ttl_s);
  live("urgent.users", running.urgent_users, fresh.urgent_users);
  live("jobs.allow_root_jobs", running.allow_root_jobs, fresh.allow_root_jobs);
  live("jobs.mpi_default", running.mpi_default, fresh.mpi_default);
  live("server.max_page_items", running.max_page_items, fresh.max_page_items);
  live("nodes.fence_timeout_s", running.fence_timeout_s, fresh.fence_timeout_s);
  live("scheduler.min_job_age_s", running.min_job_age_s, fresh.min_job_age_s);

  auto later = [&](const char* key, bool changed) {
    if (changed) restart.emplace_back(key);
  };
  later("server.client_endpoint", running.client_endpoint != fresh.client_endpoint);
  later("server.agent_endpoint", running.agent_endpoint != fresh.agent_endpoint);
  later("server.event_endpoint", running.event_endpoint != fresh.event_endpoint);
  later("server.state_dir", running.state_dir != fresh.state_dir);
  later("http.listen", running.http_listen != fresh.http_listen);
  later("server.max_message_bytes", running.max_message_bytes != fresh.max_message_bytes);
  // scheduler.policy and scheduler.params name the policy of the very first
  // start only: after it the journal's last deployed version runs
  // (`sched policy set`), so a change to them waits for nothing.
  later("scheduler.policy_dir", running.policy_dir != fresh.policy_dir);
  later("scheduler.adapt_timeout_s", running.adapt_timeout_s != fresh.adapt_timeout_s);
  later("scheduler.adapt_backoff_s", running.adapt_backoff_s != fresh.adapt_backoff_s);
  later("scheduler.mtct_window_s", running.mtct_window_s != fresh.mtct_window_s);
  later("scheduler.mtct_refresh_fraction",
        running.mtct_refresh_fraction != fresh.mtct_refresh_fraction);
  later("scheduler.kill_invalid_depend", running.kill_invalid_depend != fresh.kill_invalid_depend);
  later("scheduler.max_array_size", running.max_array_size != fresh.max_array_size);
  later("priority", !same(running.priority, fresh.priority));
  later("policy.time_limit_s", running.policy_time_limit_s != fresh.policy_time_limit_s);
  later("policy.revert_after_failures",
        running.policy_revert_after_failures != fresh.policy_revert_after_failures);
  later("nodes.heartbeat_s", running.heartbeat_s != fresh.heartbeat_s);
  later("nodes.down_after_s", running.down_after_s != fresh.down_after_s);
  later("nodes.on_failure", running.on_failure != fresh.on_failure);
  later("nodes.kill_grace_s", running.kill_grace_s != fresh.kill_grace_s);
  later("nodes.kill_timeout_s", running.kill_timeout_s != fresh.kill_timeout_s);
  later("auth.socket", running.munge_socket != fresh.munge_socket);
  later("security.secret_key_file", running.secret_key_file != fresh.secret_key_file);
  later("security.authorized_agents_file",
        running.authorized_agents_file != fresh.authorized_agents_file);
  later("power.idle_w_per_node", running.idle_w_per_node != fresh.idle_w_per_node);
  later("power.corridor_lower_w", running.corridor_lower_w != fresh.corridor_lower_w);
  later("power.corridor_upper_w", running.corridor_upper_w != fresh.corridor_upper_w);
  return applied;
}

}  // namespace sched::daemon
