#pragma once
// Disaggregation's KV handoffs: a request handed off from its prefill replica
// to a decode replica keeps its prefill blocks in a handoff record until its
// KV transfer ends (the record is then reused), and each transfer takes its
// turn on the prefill replica's link.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "hw/hardware.hpp"
#include "serve/sim_state.hpp"

namespace sightline::serve {

// One KV transfer: bytes per GPU, and its time on the clock.
struct KvTransfer {
  double bytes = 0;
  TimeNs start = 0, end = 0;
};

class KvHandoffs {
 public:
  // A record for a request handed off from `src_replica`, holding its blocks `kv`.
  int32_t hold(int32_t src_replica, KvHold&& kv) {
    int32_t i;
    if (free_.empty()) {
      i = static_cast<int32_t>(records_.size());
      records_.emplace_back();
    } else {
      i = free_.back();
      free_.pop_back();
    }
    HandoffRecord& h = records_[static_cast<size_t>(i)];
    h.src_replica = src_replica;
    h.src_kv = std::move(kv);
    return i;
  }
  HandoffRecord& operator[](int32_t i) { return records_[static_cast<size_t>(i)]; }
  void release(int32_t i) { free_.push_back(i); }  // its blocks were released: the record is free

  // The KV of `tokens` tokens of `src`'s engine `model` over `link`, starting
  // at `now` or when the link's earlier transfer ends (it is then busy until
  // this one's end).
  static KvTransfer transfer(Replica& src, int model, int64_t tokens, const InterconnectSpec& link, TimeNs now) {
    KvTransfer x;
    x.bytes = static_cast<double>(tokens) * src.engines[static_cast<size_t>(model)].kv.kv_bytes_per_token;
    const double secs = link.latency_us * 1e-6 + x.bytes / (link.bandwidth_per_gpu_GBps * 1e9);
    x.start = std::max(now, src.link_free);
    x.end = clock_add(x.start, std::max<TimeNs>(1, to_ns(secs, "/hardware", "a KV transfer")), "/hardware");
    src.link_free = x.end;
    return x;
  }

 private:
  std::vector<HandoffRecord> records_;  // indexed by SimRequest::handoff
  std::vector<int32_t> free_;           // records no request holds, for reuse
};

}  // namespace sightline::serve
