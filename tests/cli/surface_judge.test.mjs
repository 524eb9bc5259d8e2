// The aimed fuzzer's judge (tests/fuzz/surface_judge.mjs) takes a benchmark
// file as the engine's reader takes it. Its one disagreement found so far:
// Python's bare Infinity / NaN were quoted by a regular expression that also
// matched inside strings, so a file whose text held "http://localhost:-Infinity"
// stopped being JSON for the judge, and a located refusal inside it was
// counted as unlocated (fit surface, seed 44, case 7422, 2026-11-30). Costs
// well under a second: no engine, no build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeReply } from '../fuzz/surface_judge.mjs';
// The judge's and the page's one reader of the literals (web/src/client/custom.js reads a pasted config.json with it).
import { quoteNonstandardLiterals } from '../../web/src/client/json-literals.js';

const refusal = (pointer) => JSON.stringify({
  ok: false,
  error: { code: 'not_implemented', path: pointer, message: "fuzzed-bench-file: dataset format 'multi_turn' is not replayed" },
});
const fitCase = (text) => ({ op: 'fit', text, user: { text, prefix: '', name: 'fuzzed-bench-file' } });

test('bare Infinity and NaN are quoted outside strings only, as the engine reads them', () => {
  assert.equal(quoteNonstandardLiterals('{"a": [NaN, -Infinity, Infinity], "u": "x:-Infinity, NaN", "NaNa": 1}'),
    '{"a": ["NaN", "-Infinity", "Infinity"], "u": "x:-Infinity, NaN", "NaNa": 1}');
  assert.equal(quoteNonstandardLiterals('{"s": "a\\"NaN", "v": NaN}'), '{"s": "a\\"NaN", "v": "NaN"}');
  // The page tells "nothing to quote" (then JSON's own error stands) by getting its text back.
  const plain = '{"x": "NaN", "xNaN": [1, 2]}';
  assert.equal(quoteNonstandardLiterals(plain), plain);
  assert.equal(quoteNonstandardLiterals('[NaN]'), '["NaN"]');
});

test('a refusal at a pointer of a file with "-Infinity" inside a string is located', () => {
  const text = JSON.stringify({ endpoint: { url: 'http://localhost:-Infinity' }, input_config: { datasets: [{ format: 'multi_turn' }] } });
  assert.deepEqual(judgeReply('fit', refusal('/input_config/datasets/0/format'), fitCase(text)), { verdict: 'error' });
});

test('a bare NaN value keeps the file JSON; a pointer into text that is not JSON is still unlocated', () => {
  const withNaN = '{"ttft": NaN, "input_config": {"datasets": [{"format": "multi_turn"}]}}';
  assert.deepEqual(judgeReply('fit', refusal('/input_config/datasets/0/format'), fitCase(withNaN)), { verdict: 'error' });
  const broken = '{"input_config": {"datasets": [{"format": "multi_turn"}]}';
  assert.equal(judgeReply('fit', refusal('/input_config/datasets/0/format'), fitCase(broken)).verdict, 'unlocated');
});
