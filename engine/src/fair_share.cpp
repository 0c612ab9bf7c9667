#include "sched/fair_share.hpp"

#include <cmath>

namespace sched {

double fair_share_factor(double norm_usage, double norm_shares) {
  if (norm_usage <= 0) return 1;
  if (norm_shares <= 0) return 0;
  return std::exp2(-norm_usage / norm_shares);
}

FairShare::FairShare(double half_life_s, std::map<std::string, double> shares)
    : half_life_s_(half_life_s), shares_(std::move(shares)) {
  for (const auto& [user, share] : shares_) users_[user];
}

double FairShare::decayed(const Usage& usage, double now) const {
  if (half_life_s_ <= 0 || now <= usage.as_of) return usage.value;
  return usage.value * std::exp2(-(now - usage.as_of) / half_life_s_);
}

void FairShare::add(Usage& usage, double amount, double at) const {
  // Brought to the later of the two times, then added there: usage charged
  // in the past (a journal's old jobs) has already decayed by now.
  if (at >= usage.as_of) {
    usage.value = decayed(usage, at) + amount;
    usage.as_of = at;
  } else {
    usage.value += decayed(Usage{amount, at}, usage.as_of);
  }
}

void FairShare::charge(const std::string& user, const std::string& account, double node_seconds,
                       double at) {
  if (node_seconds < 0) node_seconds = 0;
  add(users_[user], node_seconds, at);
  if (!account.empty()) add(accounts_[account], node_seconds, at);
}

void FairShare::note_user(const std::string& user) { users_[user]; }

double FairShare::usage(const std::string& user, double now) const {
  const auto it = users_.find(user);
  return it == users_.end() ? 0 : decayed(it->second, now);
}

double FairShare::account_usage(const std::string& account, double now) const {
  const auto it = accounts_.find(account);
  return it == accounts_.end() ? 0 : decayed(it->second, now);
}

double FairShare::shares(const std::string& user) const {
  const auto it = shares_.find(user);
  return it == shares_.end() ? 1.0 : it->second;
}

double FairShare::total_usage(double now) const {
  double total = 0;
  for (const auto& [user, usage] : users_) total += decayed(usage, now);
  return total;
}

double FairShare::total_shares() const {
  double total = 0;
  for (const auto& [user, usage] : users_) total += shares(user);
  return total;
}

double FairShare::factor(const std::string& user, double now) const {
  const double total = total_usage(now);
  const double all_shares = total_shares() + (users_.count(user) ? 0 : shares(user));
  const double u = total > 0 ? usage(user, now) / total : 0;
  const double s = all_shares > 0 ? shares(user) / all_shares : 0;
  return fair_share_factor(u, s);
}

std::unordered_map<std::string, double> FairShare::factors(double now) const {
  std::unordered_map<std::string, double> out;
  for (const Row& row : rows(now)) out.emplace(row.user, row.factor);
  return out;
}

std::vector<FairShare::Row> FairShare::rows(double now) const {
  const double total = total_usage(now);
  const double all_shares = total_shares();
  std::vector<Row> out;
  out.reserve(users_.size());
  for (const auto& [user, usage] : users_) {
    Row row;
    row.user = user;
    row.shares = shares(user);
    row.norm_shares = all_shares > 0 ? row.shares / all_shares : 0;
    row.usage = decayed(usage, now);
    row.norm_usage = total > 0 ? row.usage / total : 0;
    row.factor = fair_share_factor(row.norm_usage, row.norm_shares);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace sched
