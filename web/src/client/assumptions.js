// "What the engine assumed": the defaults behind a result that the user did not
// set, shown under the summary line: the software stack (host overhead), the
// share of GPU memory the KV cache gets, the length and arrival distributions,
// the runtime reserve and the precision. Read from the scenario (what was set)
// and the result (what the engine used); all text goes through textContent.
import { $, cell } from './dom.js';
import { display, rateText } from './format.js';

const get = (obj, path) => path.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);

/** "(default)" when the scenario left a key to the engine. */
const dflt = (scenario, path) => (get(scenario, path) === undefined ? ' (default)' : '');

function lengthText(v) {
  if (typeof v === 'number') return `fixed ${v} tokens`;
  if (!v || typeof v !== 'object') return 'not set';
  const params = ['mean', 'cv', 'stddev', 'min', 'max', 'theta'].filter((k) => v[k] !== undefined).map((k) => `${k} ${v[k]}`);
  return `${v.dist}${params.length ? ` (${params.join(', ')})` : ''}`;
}

function items(scenario, result) {
  const out = [];
  const stack = get(result, 'cost_model.software_stack') || get(scenario, 'cost_model.software_stack') || 'vllm-like';
  out.push(`Software stack: ${typeof stack === 'string' ? stack : 'custom profile'}${dflt(scenario, 'cost_model.software_stack')}; its host overhead is an estimate, not a measurement.`);
  const tier = get(result, 'accuracy.tier') || result.cost_tier;
  if (tier) out.push(`Cost tier: ${tier}${dflt(scenario, 'cost_model.tier') ? ' (chosen automatically)' : ''}.`);
  const precision = ['weights', 'activations', 'kv_cache'].map((k) => `${k} ${get(result, `deployment.${k}`) || get(scenario, `precision.${k}`) || '—'}${dflt(scenario, `precision.${k}`)}`);
  out.push(`Precision: ${precision.join(', ')}.`);
  let mem = result.memory_per_gpu;
  if (Array.isArray(mem)) mem = mem[0];
  if (mem && Number.isFinite(mem.kv_cache_GiB) && Number.isFinite(mem.capacity_GiB) && mem.capacity_GiB > 0) {
    const util = get(scenario, 'serving.kv_cache.gpu_memory_utilization');
    const how = scenario.serving && scenario.serving.mode === 'simulate'
      ? ` (gpu_memory_utilization ${util ?? 0.9}${util === undefined ? ', default' : ''}, minus weights, activations and runtime)`
      : ' (the whole batch at full length)';
    out.push(`KV cache: ${display(mem.kv_cache_GiB)} GiB per GPU, ${display((100 * mem.kv_cache_GiB) / mem.capacity_GiB)}% of its ${display(mem.capacity_GiB)} GiB${how}.`);
  }
  if (scenario.serving) {
    const w = scenario.serving.workload || {};
    const ss = w.sessions;
    // A multi-turn workload's lengths are its sessions' (a turn's prompt is its whole context).
    if (ss && ss.csv) out.push('Prompt and output lengths: the session trace\'s turns, each turn re-sending its session\'s context.');
    else if (ss) out.push(`Prompt lengths: each turn re-sends its session's context, then its new input (the first ${lengthText(ss.first_input_tokens)}, later ones ${lengthText(ss.input_tokens)}); output lengths: ${lengthText(ss.output_tokens)}.`);
    else out.push(`Prompt lengths: ${lengthText(w.prompt_tokens)}; output lengths: ${lengthText(w.output_tokens)}.`);
    if (scenario.serving.mode === 'simulate') {
      const a = w.arrival || {};
      // A multi-turn workload's rate is of new sessions, each sending several turns.
      const rate = w.sessions ? `${display(a.rate_qps)} new sessions/s` : rateText(a.rate_qps);
      out.push(`Arrivals: ${a.process || 'poisson'}${a.process ? '' : ' (default)'}${a.rate_qps !== undefined ? ` at ${rate}` : ''}; scheduler ${get(scenario, 'serving.scheduler.policy') || 'continuous'}${dflt(scenario, 'serving.scheduler.policy')}.`);
    }
    out.push(`Runtime reserve: ${get(scenario, 'serving.runtime_overhead_GiB') ?? 1} GiB per GPU${dflt(scenario, 'serving.runtime_overhead_GiB')} for the CUDA context and workspaces.`);
  }
  if (scenario.training) {
    out.push(`Runtime reserve: ${get(scenario, 'training.runtime_overhead_GiB') ?? 2} GiB per GPU${dflt(scenario, 'training.runtime_overhead_GiB')}; optimizer ${get(scenario, 'training.optimizer.type') || 'adamw'}${dflt(scenario, 'training.optimizer.type')}; schedule ${get(scenario, 'training.schedule') || '1f1b'}${dflt(scenario, 'training.schedule')}.`);
  }
  return out;
}

/** Fills the assumptions list for a finished run. */
export function render(scenario, result) {
  const list = $('assumption-list');
  if (!list || !scenario || !result) return;
  list.replaceChildren(...items(scenario, result).map((t) => cell('li', t)));
}
