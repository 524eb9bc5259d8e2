#include "jobs/client_request_latency.hpp"

#include <string>

#include "jobs/calibration_range.hpp"
#include "run/result_header.hpp"
#include "serve/serving_job.hpp"

namespace sightline {

namespace {

// The statistics a constant shifts (a spread does not move); a summary with
// no values has none.
void shift_summary(serve::Summary& s, double by) {
  if (s.empty()) return;
  for (double* v : {&s.mean, &s.min, &s.p50, &s.p90, &s.p99, &s.max}) *v += by;
}

// Key metrics of a serving run that are TTFT or E2E statistics (not the stddev
// nor the compare ratios), with the unit's scale of a millisecond.
double key_metric_shift(const std::string& id, double latency_ms) {
  if (id == "ttft_p50_ms" || id == "ttft_p99_ms" || id == "ttft_mean_ms") return latency_ms;
  if (id == "e2e_p50_s" || id == "e2e_p99_s" || id == "e2e_mean_s") return latency_ms * 1e-3;
  return 0;
}

class RequestLatencyJob : public Job {
 public:
  // `serving`: the inner job when it is a serving simulation (the only kind the latency is added to).
  RequestLatencyJob(std::unique_ptr<Job> inner, const serve::ServingJob* serving, double latency_ms,
                    std::vector<std::string> warnings)
      : inner_(std::move(inner)), serving_(serving), ms_(latency_ms), warnings_(std::move(warnings)) {}
  bool step(int64_t max_units) override { return inner_->step(max_units); }
  double progress() const override { return inner_->progress(); }
  int64_t units_done() const override { return inner_->units_done(); }
  void limit_work(int64_t units) override { inner_->limit_work(units); }
  bool overloaded() const override { return inner_->overloaded(); }
  KeyMetrics interval_figures() const override { return inner_->interval_figures(); }
  json result() const override {
    json r = inner_->result();
    if (ms_ > 0 && serving_) {
      // The inner job wrote its unshifted figures: the metrics and key metrics
      // are written again from the typed ones, shifted (never read back).
      serve::ServingMetrics m = serving_->metrics();
      add_request_latency(m, ms_);
      r["metrics"] = m.to_json();
      r["calibration_request_latency"] = request_latency_note(ms_);
      r["key_metrics"] = key_metrics_to_json(key_metrics());
    }
    if (!warnings_.empty()) append_warnings(r, warnings_);
    return r;
  }
  KeyMetrics key_metrics() const override { return shifted(inner_->key_metrics()); }
  KeyMetrics headline_figures() const override { return shifted(inner_->headline_figures()); }
  KeyMetric figure(const std::string& id) const override { return shifted(KeyMetrics{inner_->figure(id)}).front(); }

 private:
  // Figures by catalogue id, the TTFT and E2E statistics among them shifted by the client latency.
  KeyMetrics shifted(KeyMetrics km) const {
    for (KeyMetric& k : km)
      if (k.numeric() && ms_ > 0) k.value += key_metric_shift(k.id, ms_);
    return km;
  }
  std::unique_ptr<Job> inner_;
  const serve::ServingJob* serving_;
  double ms_;
  std::vector<std::string> warnings_;
};

}  // namespace

double calibration_request_latency_ms(const Scenario& scenario) {
  const auto& c = scenario.cost_model.cluster_calibration;
  return c ? c->request_latency_ms : 0.0;
}

void add_request_latency(serve::ServingMetrics& metrics, double latency_ms) {
  shift_summary(metrics.ttft_ms, latency_ms);
  shift_summary(metrics.e2e_s, latency_ms * 1e-3);
}

json request_latency_note(double latency_ms) {
  return {{"request_latency_ms", latency_ms},
          {"added_to", json::array({"/metrics/ttft_ms", "/metrics/e2e_s"})},
          {"note", "the calibration's per-request client latency (network, HTTP, tokenizer) is added to every request's "
                   "TTFT and E2E as the fit modelled it; TPOT, ITL, throughput, goodput and SLO attainment are the "
                   "server's"}};
}

std::unique_ptr<Job> with_cluster_calibration(std::unique_ptr<Job> inner, const serve::ServingJob* serving,
                                              const Scenario& scenario) {
  if (!scenario.cost_model.cluster_calibration) return inner;
  std::vector<std::string> warnings = calibration_range_warnings(scenario);
  const double ms = calibration_request_latency_ms(scenario);
  const bool simulated = scenario.serving && scenario.serving->mode == "simulate";
  if (ms > 0 && !simulated)
    warnings.push_back("calibration_not_applied at /cost_model/calibration/factors/request_latency_ms: the per-request "
                       "latency (" + std::to_string(ms) + " ms) is added to a serving simulation's TTFT and E2E only; "
                       "this run does not include it");
  if (!(simulated && ms > 0) && warnings.empty()) return inner;
  return std::make_unique<RequestLatencyJob>(std::move(inner), serving, simulated ? ms : 0.0, std::move(warnings));
}

}  // namespace sightline
