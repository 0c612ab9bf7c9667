// Fair-share usage (issue 18 item 5), after Slurm's classic fair-share
// formula: each user's usage is the node-seconds their jobs consumed,
// charged when a job ends and decayed with a half-life; a user's factor is
// 2^(-U/S), U their share of all (decayed) usage, S their share of all
// shares. Accounts' usage is kept the same way, for `sched share`; the
// factor is the user's (a flat tree: Slurm's hierarchy is not modelled).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace sched {

class FairShare {
 public:
  // `half_life_s` 0: usage never decays. `shares`: user → shares, 1 for
  // users not named.
  FairShare(double half_life_s, std::map<std::string, double> shares);

  // A job of `user` under `account` (may be empty) consumed `node_seconds`,
  // ending at time `at`.
  void charge(const std::string& user, const std::string& account, double node_seconds, double at);
  // A user who has submitted: counts in the shares' total from now on.
  void note_user(const std::string& user);

  // Usage decayed to `now`.
  double usage(const std::string& user, double now) const;
  double account_usage(const std::string& account, double now) const;
  double shares(const std::string& user) const;
  // 2^(-U/S) for one user.
  double factor(const std::string& user, double now) const;
  // The same for every known user, computed once (a recompute's table).
  std::unordered_map<std::string, double> factors(double now) const;

  struct Row {
    std::string user;
    double shares = 0;       // raw
    double norm_shares = 0;  // S
    double usage = 0;        // decayed node-seconds
    double norm_usage = 0;   // U
    double factor = 1;
  };
  std::vector<Row> rows(double now) const;  // by user name

 private:
  struct Usage {
    double value = 0;  // node-seconds as of `as_of`
    double as_of = 0;
  };
  double decayed(const Usage& usage, double now) const;
  void add(Usage& usage, double amount, double at) const;
  double total_usage(double now) const;
  double total_shares() const;

  double half_life_s_;
  std::map<std::string, double> shares_;
  std::map<std::string, Usage> users_;  // every known user (usage may be 0)
  std::map<std::string, Usage> accounts_;
};

// 2^(-usage/shares), both normalized; 1 when there is no usage at all.
double fair_share_factor(double norm_usage, double norm_shares);

}  // namespace sched
