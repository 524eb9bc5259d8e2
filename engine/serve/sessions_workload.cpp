// The sessions workload: every session's turns drawn up front. A turn's
// prompt is its session's context so far (the system prompt, then every
// earlier turn's new input and output) plus its own new input; the context
// before it is the prefix the prefix cache can serve. A later turn arrives a
// think/tool time after the previous turn's last token, so the simulator sets
// its arrival; until then it holds its session's start.
#include <algorithm>
#include <cmath>

#include "core/det_math.hpp"
#include "serve/rng.hpp"
#include "serve/workload.hpp"

namespace sightline::serve {

namespace {

// Prefix-cache groups of the key packing (20 bits): sessions take 0 .. kMaxSessions - 1,
// the system prompt every session shares takes the last.
constexpr int64_t kMaxSessions = (int64_t{1} << 20) - 1;

class ThinkSampler {
 public:
  ThinkSampler(const TimeSpec& t, Rng rng) : t_(t), rng_(rng) {
    if (t.dist == TimeDist::Lognormal) {
      const double s2 = det_log(1.0 + t.cv * t.cv);
      sigma_ = std::sqrt(s2);
      mu_ = det_log(t.mean_s) - 0.5 * s2;
    }
  }
  double draw_s() {
    switch (t_.dist) {
      case TimeDist::Fixed: return t_.value_s;
      case TimeDist::Uniform: return t_.min_s + (t_.max_s - t_.min_s) * rng_.uniform01();
      case TimeDist::Exponential: return rng_.exponential(1.0 / t_.mean_s);
      case TimeDist::Lognormal: return rng_.lognormal(mu_, sigma_);
    }
    return 0;
  }

 private:
  TimeSpec t_;
  Rng rng_;
  double mu_ = 0, sigma_ = 0;
};

// Where the generators put their turns: the workload's request list, or only
// their count (count_sessions: the work estimate's, without holding a run's
// requests before the run is let through).
struct TurnSink {
  GeneratedWorkload& out;
  bool keep = true;
  int64_t turns = 0, prompt_tokens = 0;
  void add(const RequestSpec& r) {
    if (keep) out.requests.push_back(r);
    ++turns;
    prompt_tokens += r.prompt;
  }
};

// Appends turn `turn` of r's session: its prompt is the context so far plus
// `fresh` new tokens, the context its prefix. Returns the next turn's context.
int64_t add_turn(TurnSink& sink, RequestSpec& r, int32_t turn, TimeNs think, int64_t context, int64_t fresh,
                 int64_t output) {
  r.turn = turn;
  r.think = think;
  r.prompt = req_tokens(context + fresh);
  r.output = req_tokens(output);
  r.prefix_tokens = req_tokens(std::min<int64_t>(context, r.prompt - 1));
  sink.add(r);
  return r.prompt + r.output;
}

// A session's adapter and model, drawn once per session from their own streams.
class SessionTags {
 public:
  SessionTags(const SimulationSpec& spec, uint64_t seed)
      : spec_(spec), lora_rng_(stream_seed(seed, "lora")), model_rng_(stream_seed(seed, "model_mix")) {
    if (spec.lora.enabled && spec.lora.popularity_zipf > 0)
      lora_zipf_ = ZipfTable(0, spec.lora.adapters - 1, spec.lora.popularity_zipf);
  }
  void tag(RequestSpec& r) {
    if (spec_.lora.enabled)
      r.adapter = static_cast<int32_t>(lora_zipf_.empty() ? lora_rng_.uniform_int(0, spec_.lora.adapters - 1)
                                                          : lora_zipf_.sample(lora_rng_));
    if (spec_.colocated.enabled) r.model = model_rng_.bernoulli(spec_.colocated.traffic_fraction) ? 1 : 0;
  }

 private:
  const SimulationSpec& spec_;
  Rng lora_rng_, model_rng_;
  ZipfTable lora_zipf_;
};

// A replayed multi-turn trace: every session's turns as recorded; a later
// turn's gap counts from the previous turn's arrival (read_session_trace.cpp).
void replay_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o, TurnSink& sink) {
  GeneratedWorkload& out = sink.out;
  const SessionSpec& ss = spec.workload.sessions;
  const int64_t max_len = spec.kv.max_model_len;
  const int64_t sessions = o.num_requests.value_or(ss.num_sessions);
  SessionTags tags(spec, seed);
  const char* where = "/serving/workload/sessions/csv";
  for (size_t i = 0; i < ss.trace.size() && out.sessions < sessions;) {
    const int64_t id = ss.trace[i].session_id;
    RequestSpec r;
    r.session = static_cast<int32_t>(out.sessions);
    r.prefix_group = r.session;
    r.system_tokens = req_tokens(ss.system_prompt_tokens);
    r.think_from_arrival = true;
    tags.tag(r);
    const TimeNs start = to_ns(ss.trace[i].arrival_s, where, "a session's arrival");
    int64_t context = ss.system_prompt_tokens, made = 0;
    bool cut = false;
    for (int32_t k = 0; i < ss.trace.size() && ss.trace[i].session_id == id; ++i, ++k) {
      const SessionTraceRow& row = ss.trace[i];
      if (cut) continue;
      if (context + row.input_tokens + row.output_tokens > max_len || sink.turns >= spec.limits.max_requests) {
        cut = true;
        ++out.sessions_cut;
        continue;
      }
      r.arrival = start;
      const TimeNs gap = k == 0 ? 0 : to_ns(row.arrival_s - ss.trace[i - 1].arrival_s, where, "a gap between turns");
      context = add_turn(sink, r, k, gap, context, row.input_tokens, row.output_tokens);
      ++made;
    }
    if (made > 0) ++out.sessions;
  }
}

// Every session's turns, drawn into `sink` (the same draws whether kept or counted).
void draw_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o, TurnSink& sink) {
  if (!spec.workload.sessions.trace.empty()) return replay_sessions(spec, seed, o, sink);
  GeneratedWorkload& out = sink.out;
  const WorkloadSpec& w = spec.workload;
  const SessionSpec& ss = w.sessions;
  const int64_t max_len = spec.kv.max_model_len;
  Rng arrivals(stream_seed(seed, "arrivals"));
  SessionTags tags(spec, seed);
  LengthSampler turns(ss.turns, Rng(stream_seed(seed, "session_turns")));
  LengthSampler first_input(ss.first_input, Rng(stream_seed(seed, "session_first_input")));
  LengthSampler input(ss.input, Rng(stream_seed(seed, "session_input")));
  LengthSampler output(ss.output, Rng(stream_seed(seed, "output_tokens")));
  ThinkSampler think(ss.think_time, Rng(stream_seed(seed, "think_time")));

  const double rate = o.rate_qps.value_or(w.arrival.rate_qps);
  const bool by_duration = !o.num_requests && ss.num_sessions == 0;
  const int64_t count = o.num_requests.value_or(ss.num_sessions);
  const int64_t cap = spec.limits.max_requests;  // turns in all
  const TimeNs end = by_duration ? to_ns(w.duration_s, "/serving/workload/duration_s", "the workload duration") : 0;
  double t = 0;
  for (int64_t i = 0; by_duration || i < count; ++i) {
    t = next_arrival_s(w.arrival, rate, i, t, arrivals);
    const TimeNs start = to_ns(t, "/serving/workload/arrival/rate_qps", "a session arrival time");
    if (by_duration && start >= end) break;
    if (i >= kMaxSessions || sink.turns >= cap) {
      out.capped = true;
      break;
    }
    // One session's draws, in a fixed order, whether or not its turns fit.
    const int64_t n_turns = turns.draw();
    RequestSpec r;
    r.arrival = start;
    r.session = static_cast<int32_t>(out.sessions);
    r.prefix_group = r.session;
    r.system_tokens = req_tokens(ss.system_prompt_tokens);
    tags.tag(r);
    int64_t context = ss.system_prompt_tokens;
    int64_t made = 0;
    for (int64_t k = 0; k < n_turns; ++k) {
      const int64_t fresh = k == 0 ? first_input.draw() : input.draw();
      const int64_t out_tokens = output.draw();
      const TimeNs gap = k == 0 ? 0 : to_ns(think.draw_s(), "/serving/workload/sessions/think_time_s", "a think time");
      if (context + fresh + out_tokens > max_len || sink.turns >= cap) {
        ++out.sessions_cut;
        out.capped = out.capped || sink.turns >= cap;
        break;
      }
      context = add_turn(sink, r, static_cast<int32_t>(k), gap, context, fresh, out_tokens);
      ++made;
    }
    if (made > 0) ++out.sessions;
  }
}

}  // namespace

GeneratedWorkload generate_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o) {
  GeneratedWorkload out;
  TurnSink sink{out};
  draw_sessions(spec, seed, o, sink);
  return out;
}

SessionCount count_sessions(const SimulationSpec& spec, uint64_t seed, const WorkloadOverride& o) {
  GeneratedWorkload out;
  TurnSink sink{out, false};
  draw_sessions(spec, seed, o, sink);
  return {sink.turns, out.sessions, sink.prompt_tokens};
}

}  // namespace sightline::serve
