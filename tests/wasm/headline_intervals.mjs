// The interval rule for headline numbers (issue 11), shared by the test that
// runs every shipped scenario: a key metric with a numeric value has
// low < high with the value inside, or no interval at all when it is a size or
// a count that the kernel and collective models do not price (memory, KV
// capacity, batch, parameters), or a quantity that is exactly 0. The serving
// headline's steady-window figures and the max-QPS answer carry their
// interval and its tier beside them.

// Units of sizes and counts: the cost bounds cannot move them.
const SIZE_OR_COUNT_UNITS = new Set(['GiB', 'MiB', 'KiB', 'GB', 'tokens', 'requests', 'seq', 'M', '']);
// Ratios and shares of sizes or counts (same reason), by id.
const SIZE_OR_COUNT_RATIOS = new Set(['compare_activation_ratio', 'compare_memory_ratio', 'compare_kv_capacity_ratio',
  'compare_kv_peak_ratio', 'quant_weight_reduction', 'kv_reduction_vs_mha', 'kv_peak_utilization', 'prefix_hit_rate',
  'session_returning_hit_rate']);

function entries(km) {
  if (Array.isArray(km)) return km.map((e) => [e.id, e]);
  return km && typeof km === 'object' ? Object.entries(km) : [];
}

function checkKeyMetrics(where, km, problems) {
  let timed = 0;
  for (const [id, e] of entries(km)) {
    if (typeof e.value !== 'number') continue;
    const hasLow = typeof e.low === 'number', hasHigh = typeof e.high === 'number';
    if (hasLow !== hasHigh) problems.push(`${where} ${id}: only one of low/high`);
    else if (hasLow) {
      timed += 1;
      if (!(e.low < e.high)) problems.push(`${where} ${id}: zero-width interval ${e.low}..${e.high}`);
      if (!(e.low <= e.value && e.value <= e.high)) problems.push(`${where} ${id}: ${e.value} outside ${e.low}..${e.high}`);
    } else if (!(SIZE_OR_COUNT_UNITS.has(e.unit) || SIZE_OR_COUNT_RATIOS.has(id) || e.value === 0)) {
      problems.push(`${where} ${id} (${e.unit}): a priced metric without an interval`);
    }
  }
  return timed;
}

/**
 * Checks one run's result; pushes what is wrong onto `problems` and returns
 * how many numbers carried an interval.
 */
export function checkResultIntervals(id, res, problems) {
  let timed = checkKeyMetrics(id, res.key_metrics, problems);
  if (Array.isArray(res.compare))
    res.compare.forEach((v, i) => { timed += checkKeyMetrics(`${id} compare/${i}`, v.key_metrics, problems); });
  // A goodput of exactly 0 (e.g. none within the SLO) moves with no bound.
  for (const [where, obj, names] of [['headline', res.headline, ['throughput_qps', 'goodput_qps']], ['max_qps', res.max_qps, ['qps']]]) {
    if (!obj) continue;
    for (const name of names) {
      if (typeof obj[name] !== 'number' || obj[name] === 0) continue;
      const lo = obj[`${name}_low`], hi = obj[`${name}_high`];
      if (!(typeof lo === 'number' && lo < hi && lo <= obj[name] && obj[name] <= hi))
        problems.push(`${id} ${where}.${name}: ${obj[name]} without an interval around it (${lo}..${hi})`);
      else timed += 1;
      if (obj.interval_tier !== res.cost_tier) problems.push(`${id} ${where}: interval_tier ${obj.interval_tier}`);
    }
  }
  return timed;
}

// Issue 39: "intervals on every headline card of every mode". A card's 80% interval
// sits in the key metrics (low/high), in intervals_80 ({id: [low, high]}), or
// beside its figure (NAME_low / NAME_high next to NAME, as the steady window's
// goodput); a card without one has the engine's reason in no_interval (memory per GPU:
// the cost bounds leave it fixed). `metrics`: the catalogue's (registries' metrics).
// A card whose figure the run does not have (goodput and attainment without
// an SLO: null) shows no number, so it needs neither: it is left out.
function cardIntervals(r, metrics) {
  const kind = { serving_latency: 'latency', serving_simulation: 'serving', training: 'training' }[r.kind];
  const at = (obj, parts) => parts.reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);
  const cards = [];
  for (const id of r.headline_metrics || []) {
    const key = (r.key_metrics || []).find((k) => k.id === id);
    const parts = metrics.find((m) => m.kind === kind && m.id === id).pointer.split('/').slice(1);
    const parent = at(r, parts.slice(0, -1));
    const name = parts[parts.length - 1];
    if (!Number.isFinite(key ? key.value : parent && parent[name])) continue;
    if (key && Number.isFinite(key.low)) cards.push([id, [key.low, key.high]]);
    else if (r.intervals_80 && r.intervals_80[id]) cards.push([id, r.intervals_80[id]]);
    else cards.push([id, parent && Number.isFinite(parent[`${name}_low`]) ? [parent[`${name}_low`], parent[`${name}_high`]] : null]);
  }
  return cards;
}

/**
 * Checks that every headline card of one run's result carries an 80% interval
 * (low <= high; a share's within [0, 1]) or the engine's reason why not;
 * pushes what is wrong onto `problems` and returns the ids of the cards
 * without an interval (the keys of no_interval), sorted.
 */
export function checkCardIntervals(id, res, metrics, problems) {
  const reasons = res.no_interval || {};
  for (const [card, interval] of cardIntervals(res, metrics)) {
    if (interval) {
      if (!(interval[0] <= interval[1])) problems.push(`${id}: card ${card}: ${interval}`);
    } else if (!/^no interval: the runs at the cost model's low and high bounds /.test(reasons[card] || '')) {
      problems.push(`${id}: card ${card} has no interval and no reason`);
    }
    if (card === 'steady_slo_attainment' && interval && !(interval[0] >= 0 && interval[1] <= 1))
      problems.push(`${id}: share ${card} outside [0, 1]: ${interval}`);
  }
  return Object.keys(reasons).sort();
}
