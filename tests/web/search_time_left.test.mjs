// The Search tab's time left (web/src/client/search-words.js timeLeft, with the pool's
// spreadOrder), judged on the canonical search's own runs: each candidate's
// up-front estimate and the CPU its run took, measured natively one after
// another (tests/data/search/llama3-70b-candidates.json, from
// `./build/bench_search_candidates examples/search-llama3-70b.json OUT`,
// tests/bench/bench_search_candidates.cpp), replayed on a pool of 2 to 4
// workers as the page hands them out. After the first 10% of the runs the
// estimate must be within 2x of the time the replay then still takes (the
// rest of the candidates, then the Pareto points' two bound runs each).
// Sources and data only: no build, no browser; milliseconds of CPU.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const words = await import(pathToFileURL(path.join(repo, 'web', 'src', 'client', 'search-words.js')).href);
const { replay, centralRuns } = await import(pathToFileURL(path.join(repo, 'tests', 'web', 'search_replay.mjs')).href);
const measured = JSON.parse(fs.readFileSync(path.join(repo, 'tests', 'data', 'search', 'llama3-70b-candidates.json'), 'utf8'));

test('spreadOrder is a permutation whose first tenth reaches every part of the plan', () => {
  for (const n of [1, 2, 3, 10, 108, 162]) {
    const order = words.spreadOrder(n);
    assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
  }
  const first = words.spreadOrder(162).slice(0, 17);
  for (let part = 0; part < 6; part += 1) assert.ok(first.some((i) => Math.floor(i / 27) === part), `sixth ${part} of the plan`);
});

test('the time left: the finished runs scale the rest, a running one counts its time so far, then the bound runs', () => {
  // Two finished at twice their low ends (one met the SLO, 4 s), one running 1 s of its expected 6 s, one waiting (4 s).
  const done = [{ ms: 2000, met: false }, { ms: 4000, met: true }, null, null];
  const running = [{ index: 2, elapsedMs: 1000 }];
  assert.equal(words.timeLeft([1000, 2000, 3000, 2000], done, { workers: 1, running, intervalPoints: 8 }), 5000 + 4000 + 2 * 4 * 4000);
  // Too few finished for two workers (four needed): no figure yet.
  assert.equal(words.timeLeft([1000, 2000, 3000, 2000, 1000], done, { workers: 2, running }), null);
  // The page's outcomes say whether they met the SLO in their result.
  const met = { ms: 3000, result: { steady_state: { meets_slo: true } } };
  assert.equal(words.timeLeft([1000, 1000, 1000], [met, met, null], { workers: 1, intervalPoints: 1 }), 3000 + 2 * 3000);
});

test('the time left with reuse: a candidate that took a run costs nothing; one waiting counts the share that ran', () => {
  // Four finished at their low ends, one of them by a sibling's run (no time of its own: it does not make
  // this machine look faster); two left, one in the round now running (counted whole), one waiting on it.
  const took = { ms: 0, reusedFrom: 0, waited: true, met: false };
  const ran = { ms: 1000, met: false };
  const done = [ran, ran, ran, took, null, null];
  const low = [1000, 1000, 1000, 1000, 2000, 2000];
  // Of the finished ones that waited, none ran: the waiting one is expected to take a run too.
  assert.equal(words.timeLeft(low, done, { workers: 1, intervalPoints: 1, waiting: [5] }), 2000 + 2 * 1000);
  // Not waiting (or no reuse): it counts whole; a waited one that ran makes the share a half.
  assert.equal(words.timeLeft(low, done, { workers: 1, intervalPoints: 1 }), 4000 + 2 * 1000);
  const half = [ran, ran, { ...ran, waited: true }, took, null, null];
  assert.equal(words.timeLeft(low, half, { workers: 1, intervalPoints: 1, waiting: [5] }), 2000 + 1000 + 2 * 1000);
  // A waited one named to run but not finished counts as one that runs: of two decided, one runs.
  assert.equal(words.timeLeft(low, done, { workers: 1, intervalPoints: 1, waiting: [5], waitedNamed: 1 }), 2000 + 1000 + 2 * 1000);
  // Runs finished count toward the first figure, runs taken do not: with two workers four runs are needed.
  assert.equal(words.timeLeft(low, done, { workers: 2, intervalPoints: 1, waiting: [5] }), null);
});

test('a family\'s next run starts when its own first finishes, not when every family\'s has (search.js runCentral)', () => {
  // Family 0 runs twice (candidates 0 then 1), families 1 and 2 once; on two workers. In rounds, candidate 1
  // waits for candidate 3, which only one worker can run: one worker waits, and the runs end at 5.
  const reuse = { families: [[0, 1], [2], [3]], reusedFrom: [-1, -1, -1, -1], runMs: [1, 1, 3, 3] };
  const rounds = centralRuns(reuse, { workers: 2, order: [0, 1, 2], perFamily: false });
  assert.deepEqual([rounds.end, rounds.idle, rounds.waits], [5, 2, 1]);
  // Per family, candidate 1 is named at 1, after candidate 3 (named at 0), and takes the worker free at 3.
  const perFamily = centralRuns(reuse, { workers: 2, order: [0, 1, 2], perFamily: true });
  assert.deepEqual([perFamily.end, perFamily.idle, perFamily.waits], [4, 0, 0]);
  assert.deepEqual(perFamily.runs.map((r) => [r.i, r.start, r.end, r.waited]), [[0, 0, 1, false], [2, 0, 3, false], [3, 1, 4, false], [1, 3, 4, true]]);
  // A run taken is not run; a family whose first run settles the rest runs once.
  const settled = centralRuns({ ...reuse, reusedFrom: [-1, 0, -1, -1] }, { workers: 2, order: [0, 1, 2], perFamily: true });
  assert.deepEqual(settled.runs.map((r) => r.i), [0, 2, 3]);
});

test('on the canonical search, after 10% of the runs the time left is within 2x of the actual', () => {
  const n = measured.candidates.length;
  assert.ok(n >= 100, 'the canonical search plans over a hundred candidates');
  for (const workers of [2, 3, 4]) {
    // The first figure it shows (once twice as many runs as workers finished), then later ones.
    for (const fraction of [(2 * workers) / n, 0.1, 0.25, 0.5]) {
      const r = replay(words, measured, { workers, order: words.spreadOrder(n), fraction });
      const ratio = r.estimateMs / r.actualMs;
      assert.ok(ratio >= 0.5 && ratio <= 2, `${workers} workers, after ${r.finished} of ${n} runs: estimated ${(r.estimateMs / 1000).toFixed(1)} s, took ${(r.actualMs / 1000).toFixed(1)} s`);
      // The whole search's time, as the page then knows it (the time so far and the estimate left), against the final.
      const whole = (r.elapsedMs + r.estimateMs) / r.totalMs;
      assert.ok(whole >= 0.5 && whole <= 2, `${workers} workers, after ${r.finished} of ${n} runs: the whole search estimated ${((r.elapsedMs + r.estimateMs) / 1000).toFixed(1)} s, took ${(r.totalMs / 1000).toFixed(1)} s`);
    }
  }
});
