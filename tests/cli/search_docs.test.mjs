// docs/search.md quotes what the CLI and the unit tests print (issue 40,
// "signposts"): each quoted command is run again here and a stale figure
// fails. Checked here: every quoted output block (quoted_outputs.mjs's rule:
// the mixed-pool and wide-EP examples, the canonical answer on its own layout
// with its confirmation, both training searches) and the figures the prose
// repeats (T3.4's place on the training front, the answer's attainment at the
// high cost bound, the budget question's rate at the default cap). Checked
// where they are computed: the bounds against saturated runs and the
// disaggregated confirmation (tests/unit/test_deployment_search.cpp), the
// small cap's rate (deployment_search.test.mjs). Not checked, and dated in the
// doc: the runs too long for CI (the 162-candidate canonical search, the
// 32-GPU budget question, the page's timings, the reuse bench) and every CPU
// time. Cost: about 15 s of CPU (2026-12-01). Regenerate the blocks with
// SIGHTLINE_REGENERATE=1 node --test tests/cli/search_docs.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliPath, quotedExamples, repoDir, requoted, staleQuotes } from './quoted_outputs.mjs';

const docName = 'docs/search.md';
const doc = () => fs.readFileSync(path.join(repoDir, docName), 'utf8');
const cliJson = (args) => JSON.parse(execFileSync(cliPath, [...args, '--format', 'json'], { cwd: repoDir, encoding: 'utf8' }));

test('docs/search.md: every quoted line of a `search` example is a line the CLI prints for it', () => {
  const examples = quotedExamples(doc());
  const files = examples.map((ex) => ex.args[1]);
  for (const f of ['examples/search-llama3-70b-mixed-pools.json', 'examples/search-qwen3-30b-a3b-wide-ep.json',
                   'examples/search-llama3-70b-h200-tp2.json', 'examples/search-training-llama3-8b.json',
                   'examples/search-training-llama3-8b-usd.json'])
    assert.ok(files.includes(f), `docs/search.md quotes ${f} (found ${files.join(', ')})`);
  assert.deepEqual(staleQuotes(docName, examples), [], `${docName} quotes stale output (SIGHTLINE_REGENERATE=1 rewrites it)`);
});

// The regeneration (SIGHTLINE_REGENERATE=1) rewrites each stale line with the
// printed line it stands for: each table row its own (they once all became the
// first row, whose label they shared), the Pareto lines (which start with a
// figure, so had no label) and a header whose percentile changed.
test('a regenerated quote takes each stale line\'s own printed line, in order', () => {
  const printed = ['  meets  $/Mtok    P90 TTFT ms  P90 TPOT ms  verdict    deployment',
    '  yes    0.500     100.0        20.0         meets      h200 1x(tp2) seqs 64  (Pareto)',
    '  yes    0.600     90.0         21.0         meets      h200 2x(tp2) seqs 64',
    '  no     0.700     80.0         22.0         misses     h100 2x(tp4) seqs 128', '',
    'Pareto front among deployments meeting the SLO ($/Mtok vs P90 TTFT, 80% intervals):',
    '  0.500 [0.450, 0.550] $/Mtok, P90 TTFT 100.0 [90.0, 110.0] ms  h200 1x(tp2) seqs 64',
    '  0.600 [0.550, 0.650] $/Mtok, P90 TTFT 90.0 [80.0, 100.0] ms  h200 2x(tp2) seqs 64'];
  const block = ['  meets  $/Mtok    P99 TTFT ms  P99 TPOT ms  verdict    deployment',
    '  yes    0.400     120.0        25.0         meets      h200 1x(tp2) seqs 64  (Pareto)',
    '  yes    0.610     91.0         21.0         meets      h200 2x(tp2) seqs 64',
    '  no     0.710     81.0         22.0         misses     h100 2x(tp4) seqs 128', '...',
    '  0.400 [0.350, 0.450] $/Mtok, P90 TTFT 120.0 [90.0, 130.0] ms  h200 1x(tp2) seqs 64',
    '  0.610 [0.550, 0.650] $/Mtok, P90 TTFT 91.0 [80.0, 100.0] ms  h200 2x(tp2) seqs 64'].join('\n');
  const { lines, misses } = requoted(block, printed);
  assert.deepEqual(lines, [...printed.slice(0, 4), '...', ...printed.slice(6)]);
  assert.equal(misses.length, 6);
  assert.deepEqual(requoted(printed.join('\n'), printed), { lines: printed, misses: [] });
});

// "T3.4's own layout (`CONFIG`, ...) is the front's #N, at the tokens/s
// `sightline run --preset T3.4` gives": the block holds to the CLI above, the
// prose to the block and to the run.
test('docs/search.md: T3.4\'s own layout is where the prose puts it on the training front, at T3.4\'s own tokens/s', () => {
  const text = doc();
  const prose = /T3\.4's own layout \(`([^`]+)`[^)]*\) is the front's #(\d+)/.exec(text.replace(/\n/g, ' '));
  assert.ok(prose, 'the training paragraph names T3.4\'s layout and its place on the front');
  const block = quotedExamples(text).find((ex) => ex.args[1] === 'examples/search-training-llama3-8b.json').block;
  const line = block.split('\n').find((l) => l.includes(`${prose[1]}:`));
  assert.ok(line, `the quoted front lists ${prose[1]}`);
  const front = /#(\d+) .+?: (\d+) \[/.exec(line);
  assert.equal(front[1], prose[2], `the prose puts T3.4's layout at #${prose[2]}, the quoted front at #${front[1]}`);
  const run = cliJson(['run', '--preset', 'T3.4']);
  assert.equal(Math.round(run.result.metrics.tokens_per_s), Number(front[2]), 'T3.4 runs at another rate than its row of the front');
});

test('docs/search.md: the canonical answer fails at the high cost bound with the attainment the prose gives', () => {
  const prose = /`interval_80pct\.high_cost_bound`[^)]*attainment ([0-9.]+)\)/.exec(doc().replace(/\n/g, ' '));
  assert.ok(prose, 'the prose gives the answer\'s attainment at the high cost bound');
  const best = cliJson(['search', 'examples/search-llama3-70b-h200-tp2.json']).cheapest_meeting_slo;
  const high = best.interval_80pct.high_cost_bound;
  assert.equal(high.meets_slo, false, 'the prose says the answer fails at the high bound');
  assert.equal(high.slo_attainment.toFixed(prose[1].split('.')[1].length), prose[1]);
});

// "the default cap gives X req/s for two such replicas (16 GPUs; the example
// with no `target_qps`, `max_gpus` 16, ...)": the question as the prose builds it.
test('docs/search.md: the budget question at the default cap sustains the rate the prose quotes', () => {
  const quoted = /the default cap gives ([0-9.]+) req\/s for two such replicas/.exec(doc().replace(/\s+/g, ' '));
  assert.ok(quoted, 'docs/search.md quotes the default cap\'s max_qps');
  const q = JSON.parse(fs.readFileSync(path.join(repoDir, 'examples/search-llama3-70b.json'), 'utf8'));
  delete q.target_qps;
  Object.assign(q, { max_gpus: 16, gpus: [q.gpus.find((g) => g.gpu === 'h100-sxm')], tp: [8], max_num_seqs: [64],
                     chunked_prefill: [true], replica_options: 1 });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'search-docs-')), 'q.json');
  fs.writeFileSync(file, JSON.stringify(q));
  const best = cliJson(['search', file]).cheapest_meeting_slo;
  assert.equal(best.gpus, 16);
  assert.equal(best.max_qps.toFixed(3), quoted[1]);
});

// "(e.g. h100-sxm tp4: 30,193 blocks at 256, 30,669 at 128, 30,773 at 64)":
// the KV blocks per GPU the memory plan gives the example's base at tp 4 (a
// 50-request run each; the blocks do not depend on the load).
test('docs/search.md: the KV blocks per GPU the reuse paragraph quotes are the memory plan\'s', () => {
  const quoted = /h100-sxm tp4: ([0-9,]+) blocks at (\d+), ([0-9,]+) at (\d+), ([0-9,]+) at (\d+)\)/.exec(doc().replace(/\s+/g, ' '));
  assert.ok(quoted, 'the reuse paragraph quotes the KV blocks at three max_num_seqs');
  const base = JSON.parse(fs.readFileSync(path.join(repoDir, 'examples/search-llama3-70b.json'), 'utf8')).base;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-docs-kv-'));
  for (let i = 1; i < 7; i += 2) {
    const s = structuredClone(base);
    s.serving.parallelism = { tp: 4, pp: 1 };
    s.serving.scheduler = { max_num_seqs: Number(quoted[i + 1]) };
    s.serving.workload.num_requests = 50;
    const file = path.join(dir, `kv-${i}.json`);
    fs.writeFileSync(file, JSON.stringify(s));
    const blocks = cliJson(['run', file]).result.capacity.kv_blocks_per_replica;
    assert.equal(blocks, Number(quoted[i].replace(/,/g, '')), `KV blocks per GPU at max_num_seqs ${quoted[i + 1]}`);
  }
});
