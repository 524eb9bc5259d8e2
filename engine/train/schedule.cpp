#include "train/schedule.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace sightline {

double bubble_formula(int pp, int virtual_stages, int64_t micro_batches) {
  const double p = pp, v = virtual_stages, m = static_cast<double>(micro_batches);
  return (p - 1) / (m * v + p - 1);
}

PipelineSimulation::PipelineSimulation(ScheduleInput in) : in_(std::move(in)) {
  const int pp = std::max(1, in_.pp);
  in_.pp = pp;
  in_.virtual_stages = std::max(1, in_.virtual_stages);
  chunks_ = pp * in_.virtual_stages;
  const int64_t m = std::max<int64_t>(1, in_.micro_batches);
  in_.micro_batches = m;
  in_.fwd_s.resize(chunks_, 0.0);
  in_.bwd_s.resize(chunks_, 0.0);
  in_.act_bytes.resize(chunks_, 0.0);
  in_.p2p_fwd_s.resize(chunks_ > 0 ? chunks_ - 1 : 0, 0.0);
  in_.p2p_bwd_s.resize(chunks_ > 0 ? chunks_ - 1 : 0, 0.0);
  in_.buckets.resize(chunks_);
  fwd_end_.assign(static_cast<size_t>(chunks_) * m, -1.0);
  bwd_end_.assign(static_cast<size_t>(chunks_) * m, -1.0);
  rank_free_.assign(pp, 0.0);
  act_now_.assign(pp, 0.0);
  in_flight_now_.assign(pp, 0);
  bwd_count_.assign(pp, std::vector<int64_t>(in_.virtual_stages, 0));
  ranks_.assign(pp, RankTimeline{});
  for (RankTimeline& r : ranks_) r.first_forward_start_s.assign(in_.virtual_stages, -1.0);
  next_.assign(pp, 0);
  build_orders();
  total_ = 2 * static_cast<int64_t>(chunks_) * m;
}

void PipelineSimulation::build_orders() {
  const int pp = in_.pp, v = in_.virtual_stages;
  const int64_t m = in_.micro_batches;
  order_.assign(pp, {});
  for (int d = 0; d < pp; ++d) {
    auto& o = order_[d];
    o.reserve(static_cast<size_t>(2 * m * v));
    if (in_.kind == PipelineSchedule::GPipe || pp == 1) {
      // GPipe: every forward, then every backward (v = 1).
      for (int c = 0; c < v; ++c)
        for (int64_t i = 0; i < m; ++i) o.push_back({c, i, true});
      for (int c = v - 1; c >= 0; --c)
        for (int64_t i = 0; i < m; ++i) o.push_back({c, i, false});
      if (pp == 1 && in_.kind != PipelineSchedule::GPipe) {
        // One stage: 1F1B degenerates to forward then backward per micro-batch.
        o.clear();
        for (int64_t i = 0; i < m; ++i) {
          for (int c = 0; c < v; ++c) o.push_back({c, i, true});
          for (int c = v - 1; c >= 0; --c) o.push_back({c, i, false});
        }
      }
      continue;
    }
    if (in_.kind == PipelineSchedule::OneFOneB && v == 1) {
      const int64_t warmup = std::min<int64_t>(pp - d - 1, m);
      int64_t f = 0, b = 0;
      for (; f < warmup; ++f) o.push_back({0, f, true});
      while (f < m) {
        o.push_back({0, f++, true});
        o.push_back({0, b++, false});
      }
      while (b < m) o.push_back({0, b++, false});
      continue;
    }
    // Interleaved 1F1B (Megatron): forwards walk chunks in groups of pp
    // micro-batches; backwards walk the chunks in reverse.
    const int64_t total = m * v;
    auto fwd_pass = [&](int64_t k) {
      const int c = static_cast<int>((k / pp) % v);
      const int64_t micro = (k / (static_cast<int64_t>(pp) * v)) * pp + k % pp;
      return Pass{c, micro, true};
    };
    auto bwd_pass = [&](int64_t k) {
      const int c = v - 1 - static_cast<int>((k / pp) % v);
      const int64_t micro = (k / (static_cast<int64_t>(pp) * v)) * pp + k % pp;
      return Pass{c, micro, false};
    };
    const int64_t warmup = std::min<int64_t>(static_cast<int64_t>(pp - d - 1) * 2 + static_cast<int64_t>(v - 1) * pp, total);
    int64_t f = 0, b = 0;
    for (; f < warmup; ++f) o.push_back(fwd_pass(f));
    while (f < total) {
      o.push_back(fwd_pass(f++));
      o.push_back(bwd_pass(b++));
    }
    while (b < total) o.push_back(bwd_pass(b++));
  }
}

bool PipelineSimulation::try_schedule(int d) {
  auto& o = order_[d];
  if (next_[d] >= o.size()) return false;
  const Pass& p = o[next_[d]];
  const int pp = in_.pp;
  const int64_t m = in_.micro_batches;
  const int j = p.chunk * pp + d;  // model chunk
  const size_t idx = static_cast<size_t>(j) * m + p.micro;
  double ready = 0;
  if (p.forward) {
    if (j > 0) {
      const double prev = fwd_end_[static_cast<size_t>(j - 1) * m + p.micro];
      if (prev < 0) return false;
      ready = prev + in_.p2p_fwd_s[j - 1];
    }
  } else {
    if (j + 1 < chunks_) {
      const double next = bwd_end_[static_cast<size_t>(j + 1) * m + p.micro];
      if (next < 0) return false;
      ready = next + in_.p2p_bwd_s[j];
    } else {
      const double f = fwd_end_[idx];
      if (f < 0) return false;  // the loss needs this micro-batch's forward
      ready = f;
    }
  }
  const double start = std::max(ready, rank_free_[d]);
  const double dur = p.forward ? in_.fwd_s[j] : in_.bwd_s[j];
  const double end = start + dur;
  rank_free_[d] = end;
  RankTimeline& r = ranks_[d];
  r.busy_s += dur;
  r.end_s = end;
  if (total_ <= kMaxRecordedPasses) r.passes.push_back(PassRecord{p.chunk, p.micro, p.forward, start, end});
  if (p.forward) {
    if (p.micro == 0) r.first_forward_start_s[p.chunk] = start;
    fwd_end_[idx] = end;
    act_now_[d] += in_.act_bytes[j];
    in_flight_now_[d] += 1;
    r.peak_act_bytes = std::max(r.peak_act_bytes, act_now_[d]);
    r.peak_in_flight = std::max(r.peak_in_flight, in_flight_now_[d]);
  } else {
    bwd_end_[idx] = end;
    act_now_[d] -= in_.act_bytes[j];
    in_flight_now_[d] -= 1;
    const int64_t done_for_chunk = ++bwd_count_[d][p.chunk];
    const bool last = done_for_chunk == m;
    if (last || in_.sync_every_micro_batch) {
      for (const GradBucket& b : in_.buckets[j]) {
        const double issue = in_.overlap_grad_sync ? start + b.ready_offset_s : 0.0;
        r.comm_end_s = std::max(r.comm_end_s, issue) + b.time_s;
        r.comm_total_s += b.time_s;
      }
    }
  }
  ++next_[d];
  ++scheduled_;
  return true;
}

bool PipelineSimulation::advance(int64_t max_passes) {
  int64_t budget = max_passes;
  while (budget > 0 && scheduled_ < total_) {
    bool progress = false;
    for (int d = 0; d < in_.pp && budget > 0; ++d) {
      while (budget > 0 && try_schedule(d)) {
        progress = true;
        --budget;
      }
    }
    if (!progress) fail(error_code::kInternal, "", "pipeline schedule deadlocked (a pass waits on one never issued)");
  }
  if (scheduled_ == total_ && !in_.overlap_grad_sync) {
    // Without overlap the buckets go out only after the rank's last backward.
    for (auto& r : ranks_)
      if (r.comm_total_s > 0) r.comm_end_s = r.end_s + r.comm_total_s;
  }
  return scheduled_ == total_;
}

double PipelineSimulation::makespan_s() const {
  double t = 0;
  for (const auto& r : ranks_) t = std::max(t, r.end_s);
  return t;
}

}  // namespace sightline
