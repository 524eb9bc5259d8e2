// The recorded brute-force capacities (capacity-brute-force.json, made by the
// command in `regenerate`) and the check of a live max-QPS answer against
// them. Shared by capacity.test.mjs, which checks the record and answers I5.3
// live, and tests/wasm/determinism.test.mjs, which checks the presets that
// ship a search (I2.3, I5.5) on its own runs of them as shipped: their full
// runs carry the very max_qps answer a central-only run gives, so running
// them again here cost about 10 s of CI's CPU for no check of its own.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const record = JSON.parse(fs.readFileSync(path.join(repoRoot, 'tests/cli/capacity-brute-force.json'), 'utf8'));
export const regenerate = 'regenerate with: ./build/sightline check-capacity --all --jobs 2 --format json --max-work-units 1200000000 > tests/cli/capacity-brute-force.json';

/** Today's answer of preset `id` (a result's max_qps) within 5% of the recorded brute-force capacity, its bracket within 3.1%. */
export function checkLiveCapacity(id, q) {
  const rec = record.presets.find((p) => p.id === id);
  assert.ok(rec, `${id} is in the capacity record; ${regenerate}`);
  const msg = `${id}: answer ${q.qps} req/s (recorded ${rec.answer_qps}), recorded brute force ${rec.brute_force_qps}; ` +
    `if the model changed on purpose, ${regenerate}`;
  console.log(msg);
  assert.ok(Math.abs(q.qps / rec.brute_force_qps - 1) <= 0.05, msg);
  assert.ok(q.upper_qps <= q.qps * 1.031, msg);
}
