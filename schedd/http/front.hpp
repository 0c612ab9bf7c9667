// The HTTP side of schedd as the daemon thread sees it ([http] listen,
// docs/metrics.md, docs/admin.md "Web view"): it feeds the metrics and the
// web view's model with each event, and after each loop turn publishes
// fresh snapshots for the server's threads (published.hpp says why).
#pragma once

#include <memory>
#include <string>

#include "metrics.hpp"
#include "published.hpp"
#include "server.hpp"
#include "web_model.hpp"

namespace sched::daemon::http {

class Front {
 public:
  // Starts serving on `listen`; throws std::runtime_error when it cannot.
  explicit Front(const std::string& listen);
  ~Front();

  const std::string& url() const { return server_->url(); }

  // ---- the daemon thread
  // `partitioned`: partitions are configured (Engine::partitioned).
  void on_event(const Event& event, const Job* job, bool partitioned);
  // A nego.* event (issue 20): counted by partition and topic.
  void on_nego_event(const std::string& partition, const std::string& topic) {
    metrics_.on_nego_event(partition, topic);
    dirty_ = true;
  }
  // After a loop turn: new snapshots when something changed and
  // kMinIntervalS has passed since the last, or kMaxIntervalS in any case
  // (uptime, power). Cheap when nothing is due.
  void publish(const Engine& engine, const DaemonFigures& figures, double now);

  static constexpr double kMinIntervalS = 0.2;
  static constexpr double kMaxIntervalS = 1.0;

 private:
  Metrics metrics_;
  WebModel model_;
  Published published_;
  std::unique_ptr<Server> server_;
  bool dirty_ = true;
  DaemonFigures last_figures_;  // as last published: a change makes it dirty too
  double published_at_ = -1e300;
};

}  // namespace sched::daemon::http
