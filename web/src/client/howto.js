// Readable charts: a one-line "how to read this" under every chart, and the
// dominant kernels named under the roofline and the breakdown charts.
import { cell } from './dom.js';
import { display } from './format.js';

const HOW_TO_READ = {
  memory: 'Each colour is one use of a GPU\'s memory; the bar\'s full length is the capacity, so the grey end is what is left.',
  families: 'Each bar is one phase; its coloured parts are the time of each kernel family, so the longest part is where the time goes.',
  roofline: 'Each dot is a kernel: right means more FLOPs per byte; a dot near the sloped roof is memory-bound, near the flat roof compute-bound, far below it inefficient.',
  step: 'The bar is one optimizer step: compute per family, recompute, communication that is not hidden, the pipeline bubble and the optimizer.',
  'train-memory': 'Each colour is one use of a GPU\'s memory during training; past the capacity line it does not fit.',
  timeline: 'One row per pipeline rank, time to the right: blue blocks are forward passes, green blocks backward passes, gaps are the bubble.',
  'train-compare': 'One bar per variant of the scenario: shorter step times are better.',
  scaling: 'Throughput against the number of GPUs; the closer to the ideal line, the better the scaling efficiency.',
  'cdf-ttft': 'The share of requests (up) whose time to first token is at most the time to the right; the marks are p50, p90 and p99.',
  'cdf-tpot': 'The share of requests (up) whose time per output token is at most the time to the right; the marks are p50, p90 and p99.',
  'cdf-e2e': 'The share of requests (up) that finished within the time to the right; the marks are p50, p90 and p99.',
  queue: 'Requests running and waiting over simulated time: a waiting line that keeps growing means the server is overloaded.',
  kv: 'KV-cache blocks in use over simulated time: near the top, new requests wait or are preempted.',
  tokens: 'Tokens processed per step over time: prefill spikes and the steady decode level.',
  busy: 'Where the GPUs spent their busy time, by kernel family: the largest bar is what to optimize first.',
  'serve-memory': 'Memory per GPU of each pool: weights, KV cache, activations and the runtime reserve.',
};

/** Adds the "how to read this" line to every chart card (once, at start-up). */
export function addHowToRead(root = document) {
  for (const card of root.querySelectorAll('[data-chart]')) {
    const text = HOW_TO_READ[card.dataset.chart];
    if (!text || card.querySelector(':scope > .how-to-read')) continue;
    const line = cell('p', `How to read this: ${text}`, 'how-to-read');
    const head = card.querySelector(':scope > .card-head, :scope > h3');
    if (head) head.after(line);
    else card.prepend(line);
  }
}

/** The largest parts of a list of [name, value] pairs, as "name 61%, name 20%". */
function top(pairs, n = 3) {
  const total = pairs.reduce((s, [, v]) => s + v, 0);
  if (!(total > 0)) return '';
  return pairs.filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, v]) => `${k} ${display((100 * v) / total)}%`).join(', ');
}

function opsByName(ops) {
  const m = new Map();
  for (const op of Array.isArray(ops) ? ops : []) m.set(String(op.name), (m.get(String(op.name)) || 0) + (Number(op.time_us) || 0));
  return [...m];
}

/** Names the dominant kernels of a result under its roofline and breakdown charts. */
export function labelDominant(result) {
  const lines = [];
  if (result && result.breakdown && (result.breakdown.prefill || result.breakdown.decode_per_step)) {
    const prefill = top(opsByName(result.breakdown.prefill));
    const decode = top(opsByName(result.breakdown.decode_per_step));
    const text = `Dominant kernels: prefill ${prefill || '—'}; decode step ${decode || '—'}.`;
    lines.push(['roofline', text], ['families', text]);
  }
  const compute = result && result.step_breakdown_ms && result.step_breakdown_ms.compute;
  if (compute && typeof compute === 'object') {
    lines.push(['step', `Dominant compute: ${top(Object.entries(compute).map(([k, v]) => [k, Number(v) || 0])) || '—'}.`]);
  }
  for (const [chart, text] of lines) {
    const card = document.querySelector(`[data-chart="${chart}"]`);
    if (!card) continue;
    let p = card.querySelector(':scope > .dominant');
    if (!p) {
      p = cell('p', '', 'dominant hint');
      card.append(p);
    }
    p.textContent = text;
  }
}
