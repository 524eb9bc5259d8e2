#include "jobs/session_projection.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "serve/simulation.hpp"

namespace sightline {

namespace {

// The projection's rounds: a turn's service time depends on the turns it
// overlaps, which depend on it; ten rounds, or until no turn's end moves by
// a hundredth of its service.
constexpr int kMostRounds = 10;
constexpr double kSettled = 0.01;

// A turn in service from `start` to `end` (s), with the tokens it makes there.
struct Span {
  double start = 0, end = 0, tokens = 0;
};

// How many turns are in service, on average, over an interval: the count's
// integral over time, read at the interval's ends.
class Concurrency {
 public:
  explicit Concurrency(const std::vector<Span>& spans) {
    std::vector<std::pair<double, int>> edges;
    edges.reserve(2 * spans.size());
    for (const Span& s : spans) {
      edges.emplace_back(s.start, 1);
      edges.emplace_back(s.end, -1);
    }
    std::sort(edges.begin(), edges.end());
    double area = 0;
    int count = 0;
    for (const auto& [t, d] : edges) {
      if (!at_.empty()) area += count * (t - at_.back());
      count += d;
      at_.push_back(t);
      area_.push_back(area);
      count_.push_back(count);
    }
  }
  double mean(double a, double b) const {
    if (!(b > a)) return std::max(1, count_after(a));
    return std::max(1.0, (area_until(b) - area_until(a)) / (b - a));
  }

 private:
  size_t last_at(double t) const { return static_cast<size_t>(std::upper_bound(at_.begin(), at_.end(), t) - at_.begin()); }
  int count_after(double t) const {
    const size_t i = last_at(t);
    return i == 0 ? 0 : count_[i - 1];
  }
  double area_until(double t) const {
    const size_t i = last_at(t);
    return i == 0 ? 0 : area_[i - 1] + count_[i - 1] * (t - at_[i - 1]);
  }
  std::vector<double> at_, area_;
  std::vector<int> count_;
};

double seconds(serve::TimeNs t) { return static_cast<double>(t) * 1e-9; }

// What the probe's finished turns say: the events a shared step makes (its
// events past the arrivals over the steps its turns took, a turn's tokens
// shared with the turns in service beside it) and a step's time against the
// turns in service (least squares: a token of a turn served beside c others
// takes step0 + per_turn * c seconds).
struct StepModel {
  double events_per_step = 0, step0 = 0, per_turn = 0;
  double step_s(double concurrency) const { return step0 + per_turn * std::max(1.0, concurrency); }
};

std::vector<Span> finished_spans(const serve::Simulation& sim) {
  std::vector<Span> done;
  for (int64_t i = 0; i < sim.num_requests(); ++i) {
    const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
    if (q.state == serve::RequestState::Done && q.first_scheduled >= 0 && q.completion >= q.first_scheduled)
      done.push_back({seconds(q.first_scheduled), seconds(q.completion), static_cast<double>(q.spec.output + 1)});
  }
  return done;
}

StepModel measure_steps(const serve::Simulation& sim, const std::vector<Span>& done) {
  const Concurrency conc(done);
  double steps = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Span& s : done) {
    const double c = conc.mean(s.start, s.end), y = (s.end - s.start) / s.tokens;
    steps += s.tokens / c;
    sx += c, sy += y, sxx += c * c, sxy += c * y;
  }
  const double n = static_cast<double>(done.size());
  StepModel m;
  m.events_per_step = static_cast<double>(sim.events_processed() - sim.arrived()) / std::max(1.0, steps);
  const double var = sxx - sx * sx / n;
  m.per_turn = var > 0 ? std::max(0.0, (sxy - sx * sy / n) / var) : 0.0;
  m.step0 = sy / n - m.per_turn * sx / n;
  if (!(m.step_s(1) > 0)) m.per_turn = 0, m.step0 = sy / n;  // a fit with no positive step: the mean
  return m;
}

// The unfinished turns in record order (a session's turns are consecutive),
// and whether each waits for the unfinished turn before it: then it is ready
// only once that one is placed.
struct Unfinished {
  std::vector<int64_t> record;  // the record of each unfinished turn
  std::vector<bool> follows;    // it waits for the unfinished turn before it (same session)
};

Unfinished unfinished_turns(const serve::Simulation& sim) {
  Unfinished u;
  for (int64_t i = 0; i < sim.num_requests(); ++i) {
    const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
    if (q.state == serve::RequestState::Done || q.state == serve::RequestState::Dropped) continue;
    const bool same_session = !u.record.empty() && u.record.back() == i - 1 &&
                              sim.record(static_cast<size_t>(i - 1)).spec.session == q.spec.session && q.spec.turn > 0;
    u.record.push_back(i);
    u.follows.push_back(same_session);
  }
  return u;
}

// When turn `i` (not following an unfinished one) is ready: now when it has
// arrived, else its session's start or a think time after the turn before it.
double ready_s(const serve::Simulation& sim, int64_t i, double now) {
  const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
  if (q.state != serve::RequestState::Pending) return now;
  if (q.spec.turn == 0 || i == 0) return std::max(now, seconds(q.spec.arrival));
  const serve::SimRequest& prev = sim.record(static_cast<size_t>(i - 1));
  const double from = q.spec.think_from_arrival ? seconds(prev.spec.arrival) : seconds(std::max(prev.completion, serve::TimeNs{0}));
  return std::max(now, from + seconds(q.spec.think));
}

// One round: every unfinished turn's service, from the previous round's
// concurrency (`beside`, one a turn; empty: served alone), admitted in the
// order turns are ready into at most `slots` in service at once (the most the
// probe had: past them a turn waits, sharing no step).
std::vector<Span> project_round(const serve::Simulation& sim, const Unfinished& u, const StepModel& m,
                                const std::vector<double>& beside, size_t slots) {
  const double now = seconds(sim.sim_time());
  std::vector<Span> out(u.record.size());
  using Ready = std::pair<double, size_t>;  // when, which unfinished turn
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  std::priority_queue<double, std::vector<double>, std::greater<>> busy;  // ends of the turns in service
  for (size_t j = 0; j < u.record.size(); ++j)
    if (!u.follows[j]) ready.emplace(ready_s(sim, u.record[j], now), j);
  while (!ready.empty()) {
    const auto [at, j] = ready.top();
    ready.pop();
    double start = at;
    while (!busy.empty() && busy.top() <= start) busy.pop();
    if (busy.size() >= std::max<size_t>(1, slots)) {
      start = busy.top();
      busy.pop();
    }
    const serve::SimRequest& q = sim.record(static_cast<size_t>(u.record[j]));
    const double tokens = static_cast<double>(std::max<int64_t>(0, q.spec.output - q.generated) + 1);
    const double c = j < beside.size() ? beside[j] : 1.0;
    out[j] = {start, start + tokens * m.step_s(c), tokens};
    busy.push(out[j].end);
    if (j + 1 < u.record.size() && u.follows[j + 1]) {
      const serve::SimRequest& next = sim.record(static_cast<size_t>(u.record[j + 1]));
      ready.emplace((next.spec.think_from_arrival ? start : out[j].end) + seconds(next.spec.think), j + 1);
    }
  }
  return out;
}

// Each projected turn's mean concurrency over its service, beside the finished turns and the others projected.
std::vector<double> served_beside(const std::vector<Span>& done, const std::vector<Span>& rest) {
  std::vector<Span> all = done;
  all.insert(all.end(), rest.begin(), rest.end());
  const Concurrency conc(all);
  std::vector<double> c(rest.size());
  for (size_t j = 0; j < rest.size(); ++j) c[j] = conc.mean(rest[j].start, rest[j].end);
  return c;
}

// The most turns the probe had in service at once (its finished turns', and
// those in service when it stopped): the engine's batch and KV limits, which
// the projection's turns share.
size_t most_in_service(const serve::Simulation& sim, const std::vector<Span>& done) {
  std::vector<std::pair<double, int>> edges;
  for (const Span& s : done) edges.emplace_back(s.start, 1), edges.emplace_back(s.end, -1);
  std::sort(edges.begin(), edges.end());
  int count = 0, most = 0;
  for (const auto& e : edges) most = std::max(most, count += e.second);
  int now = 0;
  for (int64_t i = 0; i < sim.num_requests(); ++i) {
    const serve::SimRequest& q = sim.record(static_cast<size_t>(i));
    now += q.first_scheduled >= 0 && q.state != serve::RequestState::Done && q.state != serve::RequestState::Dropped;
  }
  return static_cast<size_t>(std::max(most, now));
}

}  // namespace

double project_session_events(const serve::Simulation& sim, size_t least_turns) {
  const std::vector<Span> done = finished_spans(sim);
  if (done.size() < std::max<size_t>(2, least_turns)) return 0;
  const StepModel m = measure_steps(sim, done);
  const Unfinished u = unfinished_turns(sim);
  const size_t slots = most_in_service(sim, done);
  std::vector<Span> rest = project_round(sim, u, m, {}, slots);
  for (int round = 0; round < kMostRounds; ++round) {
    std::vector<Span> next = project_round(sim, u, m, served_beside(done, rest), slots);
    bool settled = true;
    for (size_t j = 0; j < rest.size() && settled; ++j)
      settled = std::abs(next[j].end - rest[j].end) <= kSettled * (rest[j].end - rest[j].start);
    rest = std::move(next);
    if (settled) break;
  }
  const std::vector<double> beside = served_beside(done, rest);
  // Each unfinished turn: its arrival, when still to come, and its tokens' share of the steps.
  double events = static_cast<double>(sim.events_processed());
  for (size_t j = 0; j < rest.size(); ++j) {
    if (sim.record(static_cast<size_t>(u.record[j])).state == serve::RequestState::Pending) events += 1;
    events += m.events_per_step * rest[j].tokens / beside[j];
  }
  return events;
}

}  // namespace sightline
