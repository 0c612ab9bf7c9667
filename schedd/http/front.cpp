#include "front.hpp"

#include "event_wire.hpp"

namespace sched::daemon::http {

Front::Front(const std::string& listen) : server_(std::make_unique<Server>(listen, published_)) {}

Front::~Front() {
  // Event streams return before civetweb stops (it waits for its threads).
  published_.close();
  server_.reset();
}

void Front::on_event(const Event& event, const Job* job, bool partitioned) {
  metrics_.on_event(event, partition_label(job, partitioned));
  model_.on_event(event, job);
  published_.add_event(event.seq, WebModel::event_json(event, job));
  dirty_ = true;
}

void Front::publish(const Engine& engine, const DaemonFigures& figures, double now) {
  // Requests move the counters without an event (`sched stats` among them).
  if (figures.submitted != last_figures_.submitted || figures.messages != last_figures_.messages ||
      figures.bad_messages != last_figures_.bad_messages) {
    dirty_ = true;
  }
  const double since = now - published_at_;
  if (!(dirty_ && since >= kMinIntervalS) && since < kMaxIntervalS) return;
  model_.sample_power(engine, now);
  published_.set_snapshot(metrics_.render(engine, figures),
                          model_.state_json(engine, figures.submitted, now));
  published_at_ = now;
  last_figures_ = figures;
  dirty_ = false;
}

}  // namespace sched::daemon::http
