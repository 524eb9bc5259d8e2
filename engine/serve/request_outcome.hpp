#pragma once
// What happened to one request (what the headline, the steady-state judge
// and the SLO counters read), and a view of a run's outcomes that derives
// each from the simulator's record where it is: a copy of every outcome
// beside the records was 40 bytes a request (38 MiB of a 1M-request run's
// peak, where the headline judged its window).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "serve/sim_state.hpp"

namespace sightline::serve {

// One request's outcome, in arrival order; times in ns, -1 when not reached
// (a dropped or unfinished request has no completion).
struct RequestOutcome {
  TimeNs arrival = 0;
  TimeNs first_token = -1;
  TimeNs completion = -1;
  int64_t output_tokens = 0;
  int32_t gaps = 0;            // gaps between token emissions (ITL samples; SimRequest's width)
  int32_t gaps_over_itl = 0;   // of them, longer than the SLO's itl_ms bound
  // False for a request drawn but not yet arrived: a run stopped at one of
  // serving.limits holds the records of the requests due after the stop.
  bool arrived = true;
  // Arrived and neither done nor dropped when its run was cut short (at a
  // limit or a benchmark's end): in flight at the cut, not a request its
  // server failed to finish.
  bool cut = false;
  // The first turn of a session of a multi-turn workload: the session's
  // arrival (the judge's offered load ends with the last one).
  bool session_start = false;
};

// A record's outcome: only a completed request has its token times.
// `run_cut`: its run stopped before every request was done or dropped.
inline RequestOutcome outcome_of(const SimRequest& q, bool run_cut = false) {
  RequestOutcome o;
  o.arrival = q.spec.arrival;
  o.output_tokens = q.spec.output;
  o.arrived = q.state != RequestState::Pending;
  o.cut = run_cut && o.arrived && q.state != RequestState::Done && q.state != RequestState::Dropped;
  o.session_start = q.spec.session >= 0 && q.spec.turn == 0;
  if (q.state != RequestState::Done) return o;
  o.first_token = q.first_token;
  o.completion = q.completion;
  o.gaps = q.gaps;
  o.gaps_over_itl = q.gaps_over_itl;
  return o;
}

// A run's outcomes by index, read from a list of them or derived from the
// simulator's records (Simulation::outcome_view); elements come by value.
class OutcomeView {
 public:
  OutcomeView(const std::vector<RequestOutcome>& list) : list_(list.data()), n_(list.size()) {}  // NOLINT: a list is a view
  OutcomeView(const SimRequest* records, size_t n, bool run_cut) : records_(records), n_(n), run_cut_(run_cut) {}

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  RequestOutcome operator[](size_t i) const { return records_ ? outcome_of(records_[i], run_cut_) : list_[i]; }
  RequestOutcome front() const { return (*this)[0]; }
  RequestOutcome back() const { return (*this)[n_ - 1]; }
  // The first n outcomes (all of them when there are fewer).
  OutcomeView first(size_t n) const {
    OutcomeView v = *this;
    v.n_ = std::min(n, n_);
    return v;
  }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = RequestOutcome;
    using difference_type = std::ptrdiff_t;
    using pointer = const RequestOutcome*;
    using reference = RequestOutcome;
    iterator(const OutcomeView* v, size_t i) : v_(v), i_(i) {}
    RequestOutcome operator*() const { return (*v_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const OutcomeView* v_;
    size_t i_;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, n_); }

 private:
  const RequestOutcome* list_ = nullptr;
  const SimRequest* records_ = nullptr;
  size_t n_ = 0;
  bool run_cut_ = false;  // the records' run stopped at a limit or a benchmark's end
};

}  // namespace sightline::serve
