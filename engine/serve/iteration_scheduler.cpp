// Iteration-level batching, the "continuous" and "chunked_prefill" policies
// (serve/scheduler_policies.hpp).
#include <algorithm>
#include <climits>
#include <unordered_set>

#include "serve/scheduler_policies.hpp"
#include "serve/token_ledger.hpp"

namespace sightline::serve {

namespace {

// Iteration-level batching: every step takes running decodes, prompt chunks
// and new prompts up to the token budget, in the order the priority sets.
class IterationScheduler : public BatchScheduler {
 public:
  IterationScheduler(bool chunked, const SimulationSpec& spec, std::vector<SimRequest>& requests, KvManager& kv,
                     MetricsRecorder& rec, SchedulerHost& host)
      : BatchScheduler(spec, requests, kv, rec, host), chunked_(chunked) {}

  bool form(Replica& r, ModelEngine& e, StepBatch& b) override;
  void complete(Replica& r, ModelEngine& e, StepBatch& b) override;

 private:
  void swap_in(ModelEngine& e, StepBatch& b);
  bool admit(ModelEngine& e, SimRequest& q, int64_t budget, int64_t& chunk, StepBatch& b);
  int32_t pick_victim(const ModelEngine& e, int32_t exclude) const;
  void waiting_candidates(const ModelEngine& e, size_t want, std::vector<int32_t>& out, int64_t min_key) const;
  // form()'s two halves beside admission: a running request's decode (or
  // verify) step, its KV grown by preempting others or, with no victim left,
  // itself (false then); and the step's candidates offered to `process` in
  // the priority's order (it returns true when no later candidate can join).
  bool grow_for_decode(ModelEngine& e, SimRequest& q, StepBatch& b, int64_t step_tokens);
  // The one check of a decode (or verify) candidate, a request whose prompt
  // is computed and that is in no step, for `process` and the in-place walk
  // (offer_running) alike, in process's order: StepFull, the budget has no
  // room for the step's tokens (the walk stops); NotRunning, not a running
  // request; Fits, its blocks hold the step's tokens (grown when the pool had
  // the blocks); MustGrow, the pool is short (a failed grow takes nothing):
  // growing means preempting (grow_for_decode). Inline: it runs per
  // sequence of every step. `check` is kv_.grow_check(e.kv), read once per step.
  enum class DecodeFit : int8_t { StepFull, NotRunning, Fits, MustGrow };
  __attribute__((always_inline)) DecodeFit fit_decode(ModelEngine& e, SimRequest& q, int64_t budget,
                                                      int64_t step_tokens, const KvManager::GrowCheck& check) {
    if (budget <= 0) return DecodeFit::StepFull;
    if (q.state != RequestState::Running) return DecodeFit::NotRunning;
    if (step_tokens > budget) return DecodeFit::StepFull;
    const int64_t after = q.computed + step_tokens;
    return check.covered(q.kv, after) || kv_.grow(e.kv, q.kv, after) ? DecodeFit::Fits : DecodeFit::MustGrow;
  }
  // `process` is a template parameter, not a std::function: it runs once per
  // candidate of every step (an indirect call there was 9% of a run's samples).
  // `offer_running` offers the running set's decodes where the priority
  // offers them after the queue's prompts and nothing else (prefill first,
  // not chunked).
  template <class Process, class OfferRunning>
  void offer_in_priority_order(ModelEngine& e, int64_t first_key, const StepBatch& b, const Process& process,
                               const OfferRunning& offer_running);
  // `q` joins step `b` as an item of `kind` with `new_tokens`, priced as it
  // asks. Inline: it runs per sequence of every step.
  __attribute__((always_inline)) static void add_item(StepBatch& b, int32_t id, SimRequest& q, ItemKind kind,
                                                      int64_t new_tokens) {
    StepItem it;
    it.req = id;
    it.kind = kind;
    it.new_tokens = new_tokens;
    it.cached = q.computed;
    b.items.push_back(it);
    b.add_seq(SeqChunk{new_tokens, it.cached});
    q.in_flight = true;
    if (kind == ItemKind::Prefill) b.prefill_tokens += new_tokens;
    else b.decode_tokens += new_tokens;
  }
  // The running requests from position `from` on that are in no step yet,
  // into decodes_ (prompt computed) and partials_ (not yet), in their order.
  void split_running(const ModelEngine& e, size_t from);
  // The in-place walk's loop (form's offer_running): the running set's
  // decodes, from its start, taken into `b` as `kind` items of `step_tokens`
  // while each fits, as add_item and form's take_decode would; returns the
  // position it stopped at (the set's size when it ended), `full` when the
  // step filled there. Its counters are locals, written back once: through
  // the lambdas' captured references they were reloaded from the stack per
  // sequence (about 100 instructions a decode).
  size_t take_running_decodes(ModelEngine& e, StepBatch& b, int64_t& budget, int64_t step_tokens, ItemKind kind,
                              bool& full);

  bool chunked_;
  // Per-step lists, kept between steps so that forming a step allocates
  // nothing once they have grown to the largest batch.
  std::vector<int32_t> decodes_, partials_, waiting_, admitted_, order_;
};

void IterationScheduler::swap_in(ModelEngine& e, StepBatch& b) {
  while (!e.swapped.empty()) {
    const int32_t id = e.swapped.front();
    SimRequest& q = req(id);
    if (seq_limit_.reached(static_cast<int64_t>(e.running.size()), spec_.scheduler.max_num_seqs)) break;
    double bytes = 0;
    if (!kv_.swap_in(e.kv, q.kv, q.swapped_blocks, bytes)) break;
    b.swap_bytes += bytes;
    q.state = RequestState::Running;
    host_.join_running(e, q);
    host_.attach_adapter(e, q);
    e.swapped.pop_front();
    rec_.dequeued();
  }
}

bool IterationScheduler::admit(ModelEngine& e, SimRequest& q, int64_t budget, int64_t& chunk, StepBatch& b) {
  int64_t hit_tokens = 0;
  if (!kv_.admit(e.kv, q.kv, q.spec, q.target, budget, chunked_, chunk, hit_tokens, &b.reload_s)) return false;
  q.computed = static_cast<ReqTokens>(hit_tokens);  // at most its prompt
  q.cached_tokens += hit_tokens;
  rec_.counts().cached += hit_tokens;
  e.queued_tokens -= q.target;
  return true;
}

// The most recently admitted running request that is not in a step (vLLM preempts from the back).
int32_t IterationScheduler::pick_victim(const ModelEngine& e, int32_t exclude) const {
  for (size_t i = e.running.size(); i-- > 0;) {
    const int32_t id = e.running[i];
    if (id != exclude && !reqs_[static_cast<size_t>(id)].in_flight) return id;
  }
  return -1;
}

// The queued prompts a step may admit, in queue order, at most `want` of them.
// Without LoRA that is the queue's head. With LoRA a prompt whose adapter
// cannot join (max_adapters_per_batch adapters already running) is passed
// over, as vLLM does, so the prompts admitted can lie deep in the queue. They
// are found without walking it: first the head, as long as each prompt's
// adapter is running or a free adapter slot takes it; from the first prompt
// that no slot can take, only the running adapters' prompts (and the head's
// new ones) can still start, and their own queues are merged in order. The
// cost is O(want x log) per step whatever the queue's length. A prompt that
// becomes admissible only because a preemption in this same step frees an
// adapter slot waits for the next step (as a prompt preempted in this step
// does). Entries with a key below `min_key` (prompts preempted to the queue's
// front during this step) are not candidates.
void IterationScheduler::waiting_candidates(const ModelEngine& e, size_t want, std::vector<int32_t>& out,
                                            int64_t min_key) const {
  out.clear();
  struct Count {  // every entry put out, and the one that ends the head's walk
    const std::vector<int32_t>& out;
    int64_t& reads;
    ~Count() { reads += static_cast<int64_t>(out.size()) + 1; }
  } count{out, queue_reads_};
  const WaitingQueue::Entries& all = e.waiting.entries();
  if (!spec_.lora.enabled) {
    for (auto it = all.lower_bound(min_key); it != all.end() && out.size() < want; ++it) out.push_back(it->second);
    return;
  }
  const int max_adapters = spec_.lora.max_adapters_per_batch;
  int distinct = e.distinct_adapters;
  std::unordered_set<int32_t> joining;  // adapters the head's prompts would bring in
  int64_t last_key = 0;
  bool passed_over = false;
  auto running_adapter = [&](int32_t a) { return a < 0 || e.adapter_refs[static_cast<size_t>(a)] > 0; };
  for (auto it = all.lower_bound(min_key); it != all.end() && out.size() < want; ++it) {
    const int32_t a = reqs_[static_cast<size_t>(it->second)].spec.adapter;
    if (!running_adapter(a) && !joining.count(a)) {
      if (distinct >= max_adapters) {
        passed_over = true;
        break;
      }
      joining.insert(a);
      ++distinct;
    }
    out.push_back(it->second);
    last_key = it->first;
  }
  if (!passed_over || out.size() >= want) return;
  // Past the head: merge the queues of the adapters that can still join.
  std::unordered_set<int32_t> classes(joining.begin(), joining.end());
  classes.insert(-1);  // prompts with no adapter
  for (int32_t id : e.running) {
    const int32_t a = reqs_[static_cast<size_t>(id)].spec.adapter;
    if (running_adapter(a)) classes.insert(a);
  }
  using Cursor = std::pair<WaitingQueue::Entries::const_iterator, WaitingQueue::Entries::const_iterator>;
  std::vector<Cursor> cursors;
  for (int32_t a : classes) {
    const WaitingQueue::Entries* q = e.waiting.class_entries(a);
    if (!q) continue;
    auto from = out.empty() ? q->lower_bound(min_key) : q->upper_bound(last_key);
    if (from != q->end()) cursors.emplace_back(from, q->end());
  }
  auto later = [](const Cursor& x, const Cursor& y) { return x.first->first > y.first->first; };
  std::make_heap(cursors.begin(), cursors.end(), later);
  while (!cursors.empty() && out.size() < want) {
    std::pop_heap(cursors.begin(), cursors.end(), later);
    Cursor& c = cursors.back();
    out.push_back(c.first->second);
    if (++c.first == c.second) cursors.pop_back();
    else std::push_heap(cursors.begin(), cursors.end(), later);
  }
}

bool IterationScheduler::grow_for_decode(ModelEngine& e, SimRequest& q, StepBatch& b, int64_t step_tokens) {
  while (!kv_.grow(e.kv, q.kv, q.computed + step_tokens)) {
    const int32_t victim = pick_victim(e, id_of(q));
    if (victim < 0) {
      host_.preempt(e, q, b);
      return false;
    }
    host_.preempt(e, req(victim), b);
  }
  return true;
}

void IterationScheduler::split_running(const ModelEngine& e, size_t from) {
  decodes_.clear();
  partials_.clear();
  for (size_t i = from; i < e.running.size(); ++i) {
    const SimRequest& q = reqs_[static_cast<size_t>(e.running[i])];
    if (q.in_flight) continue;
    (q.computed >= q.target ? decodes_ : partials_).push_back(e.running[i]);
  }
}

size_t IterationScheduler::take_running_decodes(ModelEngine& e, StepBatch& b, int64_t& budget_io, int64_t step_tokens,
                                                ItemKind kind, bool& full) {
  SimRequest* const reqs = reqs_.data();
  // Nothing in this walk changes the running set (it ends where a change could begin).
  const int32_t* const running = e.running.data();
  const size_t n = e.running.size();
  b.items.reserve(b.items.size() + n);  // room for every sequence: no growth in the loop
  b.shape.seqs.reserve(b.shape.seqs.size() + n);
  int64_t budget = budget_io, taken = 0, with_cache = 0, keys = 0;  // BatchSummary::add_alike's counts
  const KvManager::GrowCheck check = kv_.grow_check(e.kv);
  full = false;
  size_t i = 0;
  for (; i < n; ++i) {
    const int32_t id = running[i];
    SimRequest& q = reqs[id];
    if (q.in_flight || q.computed < q.target) continue;  // not in the split's decodes
    const DecodeFit fit = fit_decode(e, q, budget, step_tokens, check);
    if (fit == DecodeFit::StepFull) {
      full = true;
      break;
    }
    if (fit != DecodeFit::Fits) break;  // no change made: the caller's process decides from here
    StepItem it;  // add_item's
    it.req = id;
    it.kind = kind;
    it.new_tokens = step_tokens;
    it.cached = q.computed;
    b.items.push_back(it);
    b.shape.seqs.push_back(SeqChunk{step_tokens, it.cached});
    const bool cached = it.cached > 0;
    with_cache += cached ? 1 : 0;
    keys += cached ? it.cached + 1 : 0;
    q.in_flight = true;
    ++taken;
    budget -= step_tokens;
  }
  b.summary.add_alike(step_tokens, taken, with_cache, keys);  // the summary add_seq would have counted
  b.decode_tokens += step_tokens * taken;                     // decode (or verify) tokens
  budget_io = budget;
  return i;
}

template <class Process, class OfferRunning>
void IterationScheduler::offer_in_priority_order(ModelEngine& e, int64_t first_key, const StepBatch& b,
                                                 const Process& process,
                                                 const OfferRunning& offer_running) {
  const Priority prio = spec_.scheduler.priority;
  // Unchunked, a step that admits prompts runs them alone under either.
  if ((prio == Priority::PrefillFirst || prio == Priority::PrefillAlone) && !chunked_) {
    process(waiting_);
    // No prompt admitted: the running set is as it was when the step began.
    if (admitted_.empty()) offer_running();
  } else if (prio == Priority::PrefillAlone) {
    // SGLang without mixed chunks: a step that takes prompt tokens (a
    // prompt's next chunk or a new prompt) takes no decodes; they run in the
    // next step that has no prompt to take.
    std::vector<int32_t>& c = order_;
    c.assign(partials_.begin(), partials_.end());
    c.insert(c.end(), waiting_.begin(), waiting_.end());
    const size_t before = b.items.size();
    process(c);
    if (b.items.size() == before) process(decodes_);
  } else if (prio == Priority::PrefillFirst) {
    std::vector<int32_t>& c = order_;
    c.assign(partials_.begin(), partials_.end());
    c.insert(c.end(), waiting_.begin(), waiting_.end());
    c.insert(c.end(), decodes_.begin(), decodes_.end());
    process(c);
  } else if (prio == Priority::DecodeFirst) {
    std::vector<int32_t>& c = order_;
    c.assign(decodes_.begin(), decodes_.end());
    c.insert(c.end(), partials_.begin(), partials_.end());
    // Under LoRA the decodes' preemptions can free adapter slots: the queued
    // prompts are chosen after them, among those queued when the step began.
    if (!process(c)) {
      if (spec_.lora.enabled) {
        const size_t seats_now = static_cast<size_t>(std::max<int64_t>(0, spec_.scheduler.max_num_seqs - static_cast<int64_t>(e.running.size())));
        waiting_candidates(e, seats_now + 1, waiting_, first_key);
      }
      process(waiting_);
    }
  } else {
    std::vector<int32_t>& c = order_;
    c.assign(decodes_.begin(), decodes_.end());
    c.insert(c.end(), partials_.begin(), partials_.end());
    c.insert(c.end(), waiting_.begin(), waiting_.end());
    std::stable_sort(c.begin(), c.end(), [&](int32_t x, int32_t y) {
      const auto& a = req(x).spec;
      const auto& bb = req(y).spec;
      return a.arrival != bb.arrival ? a.arrival < bb.arrival : x < y;
    });
    process(c);
  }
}

bool IterationScheduler::form(Replica& r, ModelEngine& e, StepBatch& b) {
  if (r.role == PoolRole::Decode) host_.admit_transfers(r, e);
  swap_in(e, b);

  const bool chunked = chunked_;
  const Priority prio = spec_.scheduler.priority;
  const int64_t max_seqs = spec_.scheduler.max_num_seqs;
  const int64_t step_tokens = spec_k_ > 0 ? spec_k_ + 1 : 1;
  int64_t budget = spec_.scheduler.max_num_batched_tokens;
  bool admissions_blocked = !e.swapped.empty();

  std::vector<int32_t>& waiting = waiting_;
  // Prefill first, not chunked: the running set is offered after the queue,
  // and walked where it is (offer_running), not split first.
  const bool running_walked_in_place = (prio == Priority::PrefillFirst || prio == Priority::PrefillAlone) && !chunked;
  const bool waiting_last = prio == Priority::DecodeFirst || prio == Priority::PrefillAlone || running_walked_in_place;
  if (!running_walked_in_place) split_running(e, 0);
  // Admission stops at the first prompt that cannot start, so at most seats + 1
  // queued prompts matter: the queue's head, or under LoRA the first ones whose
  // adapter can join (waiting_candidates).
  const size_t seats = static_cast<size_t>(std::max<int64_t>(0, max_seqs - static_cast<int64_t>(e.running.size())));
  // Prompts preempted back to the queue during this step get keys below this one.
  const int64_t first_key = e.waiting.empty() ? INT64_MAX : e.waiting.entries().begin()->first;
  waiting_candidates(e, seats + 1, waiting, INT64_MIN);
  std::vector<int32_t>& admitted_ids = admitted_;  // prompts admitted in this step (a victim preempted in it may be one)
  admitted_ids.clear();

  // The records never move while a run steps: one base for both walks.
  SimRequest* const reqs = reqs_.data();
  const KvManager::GrowCheck grow_check = kv_.grow_check(e.kv);
  const ItemKind decode_kind = spec_k_ > 0 ? ItemKind::Verify : ItemKind::Decode;
  auto take_decode = [&](int32_t id, SimRequest& q) __attribute__((always_inline)) {
    add_item(b, id, q, decode_kind, step_tokens);
    budget -= step_tokens;
  };

  // Walks candidates in order; true when it stopped before their end (no later
  // candidate could join either).
  auto process = [&](const std::vector<int32_t>& cand) -> bool {
    for (int32_t id : cand) {
      if (budget <= 0) return true;
      SimRequest& q = reqs[id];
      if (q.in_flight) continue;
      if (q.state == RequestState::Running) {
        if (q.computed >= q.target) {
          const DecodeFit fit = fit_decode(e, q, budget, step_tokens, grow_check);
          if (fit == DecodeFit::StepFull) return true;
          // Preempting for its blocks only when the pool is short.
          if (fit == DecodeFit::MustGrow && !grow_for_decode(e, q, b, step_tokens)) continue;
          take_decode(id, q);
        } else {
          const int64_t chunk = std::min<int64_t>({q.target - q.computed, budget, spec_.scheduler.max_prefill_chunk});
          if (!kv_.grow(e.kv, q.kv, q.computed + chunk)) continue;
          add_item(b, id, q, ItemKind::Prefill, chunk);
          budget -= chunk;
        }
      } else if (q.state == RequestState::Queued) {
        if (admissions_blocked) {
          if (waiting_last) return true;  // only waiting prompts follow
          continue;
        }
        if (seq_limit_.reached(static_cast<int64_t>(e.running.size()), max_seqs)) {
          admissions_blocked = true;
          continue;
        }
        if (!host_.adapter_fits(e, q)) continue;
        int64_t chunk = 0;
        if (!admit(e, q, chunked ? std::min(budget, spec_.scheduler.max_prefill_chunk) : budget, chunk, b)) {
          admissions_blocked = true;
          continue;
        }
        q.state = RequestState::Running;
        host_.join_running(e, q);
        host_.attach_adapter(e, q);
        add_item(b, id, q, ItemKind::Prefill, chunk);
        budget -= chunk;
        admitted_ids.push_back(id);
      }
    }
    return false;
  };

  // process(decodes_) after split_running(e, 0), in one pass over the
  // running set and without its lists, as long as nothing can change the
  // set: up to the first decode whose blocks must grow (growing may preempt)
  // or that is not running; from there on, the split's list of the rest is offered.
  auto offer_running = [&]() -> bool {
    bool full = false;
    const size_t i = take_running_decodes(e, b, budget, step_tokens, decode_kind, full);
    if (full) return true;
    if (i == e.running.size()) return false;
    split_running(e, i);
    return process(decodes_);
  };
  offer_in_priority_order(e, first_key, b, process, offer_running);
  if (!admitted_ids.empty()) {
    // Admitted prompts leave the queue, wherever they were in it.
    for (int32_t id : admitted_ids) e.waiting.erase(req(id).queue_key);
    rec_.dequeued(static_cast<int64_t>(admitted_ids.size()));
  }
  return !b.items.empty();
}

void IterationScheduler::complete(Replica& r, ModelEngine& e, StepBatch& b) {
  TokenCounts& counts = rec_.counts();
  // A copy of the ledger (its references and block size): the loop's stores
  // into the records do not make the compiler reload a local's references
  // per item, as they did the host's ledger's.
  TokenLedger tokens = host_.tokens();
  SimRequest* const reqs = reqs_.data();  // the records never move while a run steps
  for (const StepItem& it : b.items) {
    SimRequest& q = reqs[it.req];
    q.in_flight = false;
    if (q.state != RequestState::Running) continue;
    switch (it.kind) {
      case ItemKind::Prefill: {
        q.computed += it.new_tokens;
        q.processed += it.new_tokens;
        counts.processed += it.new_tokens;
        kv_.publish_prefix(e.kv, q.kv, q.spec, q.computed);
        tokens.computed(q);
        if (q.computed >= q.target) {
          tokens.emit_tokens(q, 1);
          if (q.generated >= q.spec.output) host_.finish(r, e, q);
          else if (r.role == PoolRole::Prefill) host_.handoff(r, e, q);
        }
        break;
      }
      case ItemKind::Decode: {
        q.computed += 1;
        q.processed += 1;
        counts.processed += 1;
        tokens.decoded(q, 1);
        if (q.generated >= q.spec.output) host_.finish(r, e, q);
        break;
      }
      case ItemKind::Verify: {
        // Each of the k draft tokens is accepted with the configured
        // probability until the first rejection; the target adds one token.
        int64_t accepted = 0;
        while (accepted < spec_k_ && host_.acceptance_draw() < spec_.speculative.acceptance_rate) ++accepted;
        const int64_t committed = std::min<int64_t>(accepted + 1, q.spec.output - q.generated);
        ++counts.verify_items;
        counts.verify_committed += committed;
        counts.spec_rejected += it.new_tokens - committed;
        q.computed += committed;
        q.processed += committed;
        counts.processed += committed;
        tokens.decoded(q, committed);
        if (q.generated >= q.spec.output) host_.finish(r, e, q);
        break;
      }
    }
  }
}

}  // namespace

std::unique_ptr<BatchScheduler> make_iteration_scheduler(bool chunked, const SimulationSpec& spec,
                                                         std::vector<SimRequest>& requests, KvManager& kv,
                                                         MetricsRecorder& rec, SchedulerHost& host) {
  return std::make_unique<IterationScheduler>(chunked, spec, requests, kv, rec, host);
}

}  // namespace sightline::serve
