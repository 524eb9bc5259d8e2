#include "train/layout_comm.hpp"

namespace sightline {

namespace {

PricedOperator priced(const std::string& name, double count, double time_s, double bytes) {
  PricedOperator p;
  p.name = name;
  p.family = OpFamily::Collective;
  p.count = count;
  p.time_s = p.time_low_s = p.time_high_s = time_s;
  p.bytes = bytes;
  p.bound = "communication";
  return p;
}

}  // namespace

LayoutComm price_layout_comm(const GraphContext& g, const CommPricer& comm, const TrainGroups& groups) {
  LayoutComm out;
  const ModelArch& m = g.model;
  const double moe_layers = g.layers[item_index(GraphItem::MoeLayer)];
  if (g.ep > 1 && m.is_moe()) {
    // Each token goes to top_k experts and comes back; the busiest rank moves load_imbalance × the mean.
    const double msg = static_cast<double>(g.tokens) * m.moe.top_k * m.hidden_size * g.act_bytes *
                       g.config.moe_load_imbalance;
    const double one = comm.collective(CollectiveKind::AllToAll, msg, groups.ep);
    out.ep_fwd_s = out.ep_bwd_s = 2.0 * one;  // dispatch + combine
    out.ep_calls = 2;
    out.parts.push_back(priced("ep_all_to_all", 2.0 * moe_layers, 2.0 * one * moe_layers, msg * 2.0 * moe_layers));
    out.parts.push_back(priced("ep_all_to_all_bwd", 2.0 * moe_layers, 2.0 * one * moe_layers, msg * 2.0 * moe_layers));
  }
  if (g.cp > 1) {
    const double kv_chunk = static_cast<double>(g.tokens) * 2.0 * g.kv_local * g.act_bytes;
    const bool inter = groups.cp.inter_node();
    const int cp = g.cp;
    out.cp_fwd_s = (cp - 1) * comm.p2p(kv_chunk, inter);
    out.cp_bwd_s = (cp - 1) * comm.p2p(2.0 * kv_chunk, inter);  // K,V forward again and dK,dV back
    const double layers = static_cast<double>(m.num_layers);
    out.parts.push_back(priced("cp_ring_kv", (cp - 1) * layers, out.cp_fwd_s * layers, kv_chunk * (cp - 1) * layers));
    out.parts.push_back(
        priced("cp_ring_kv_bwd", (cp - 1) * layers, out.cp_bwd_s * layers, 2.0 * kv_chunk * (cp - 1) * layers));
  }
  return out;
}

}  // namespace sightline
