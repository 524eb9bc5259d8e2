// The seed documents of the aimed fuzzer (tests/fuzz/surfaces.mjs), one set
// per input surface, all real artefacts in the repository:
//   bench        tests/data/bench/real (real files of every tool, SOURCES.md
//                there) and tests/data/bench (files written with each tool's
//                field names), each with its shape: json, jsonl or summary
//   calibration  tests/data/calibration: calibration files `sightline fit` wrote
//                (SOURCES.md there), put into a short serving scenario as
//                `run --calibration` does
//   hf           tests/data/hf/published: published config.json files of each
//                family (and an hf_quant_config.json pair)
//   hardware     scenario presets with custom GPUs, pools (one on another GPU),
//                wide expert parallelism and switch domains (NVL72, HGX, xGMI)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p) => fs.readFileSync(path.join(repoRoot, p), 'utf8');
const readJson = (p) => JSON.parse(read(p));
// Python's json writes a bare Infinity (Nemotron-H's time_step_limit): kept
// through structural mutation as a marker string, written back by toText.
const INF = '@Infinity@';
const readPythonJson = (p) => JSON.parse(read(p).replace(/(?<=[\[,:]\s*)(-?)Infinity\b/g, `"$1${INF}"`));
/** JSON text of a seed or mutated document, Python's bare Infinity restored. */
export const toText = (doc, indent) => JSON.stringify(doc, null, indent).replace(new RegExp(`"(-?)${INF}"`, 'g'), '$1Infinity');
const jsonFiles = (dir) => fs.readdirSync(path.join(repoRoot, dir)).filter((f) => f.endsWith('.json')).sort();

export function benchSeeds() {
  const out = [];
  for (const dir of ['tests/data/bench/real', 'tests/data/bench']) {
    for (const f of fs.readdirSync(path.join(repoRoot, dir)).sort()) {
      const shape = f.endsWith('.jsonl') ? 'jsonl' : f.endsWith('.txt') ? 'summary' : f.endsWith('.json') ? 'json' : null;
      if (!shape) continue;
      const text = read(`${dir}/${f}`);
      out.push({ name: f, shape, text, doc: shape === 'json' ? JSON.parse(text) : null });
    }
  }
  return out;
}

// A short serving run on one A100 (I2.1 cut to a few requests): the scenario a
// calibration file is put into, and the base of the fit cases.
export function shortServing(requests = 8) {
  const s = readJson('presets/scenarios/I2.1.json');
  s.serving.workload.num_requests = requests;
  s.limits = { max_work_units: 20000 };
  return s;
}

export function calibrationSeeds() {
  return jsonFiles('tests/data/calibration').map((f) => ({ name: f, doc: readJson(`tests/data/calibration/${f}`) }));
}

export function hfSeeds() {
  const dir = 'tests/data/hf/published';
  const out = [];
  for (const f of jsonFiles(dir)) {
    if (f.endsWith('_hf_quant.json')) continue;
    const doc = readPythonJson(`${dir}/${f}`);
    const quant = f.replace(/\.json$/, '_hf_quant.json');
    if (fs.existsSync(path.join(repoRoot, dir, quant))) {
      out.push({ name: `${f}+${quant}`, doc: { hf_config: doc, hf_quant_config: readJson(`${dir}/${quant}`) } });
    }
    out.push({ name: f, doc });
  }
  return out;
}

// A GPU preset written out as a custom GPU object, as a user pastes one.
const customGpu = (id) => ({ ...readJson(`presets/gpus/${id}.json`), id: `custom-${id}` });
const customLink = (id) => ({ ...readJson(`presets/interconnects/${id}.json`), id: `custom-${id}` });

export function hardwareSeeds() {
  const out = [];
  const s1 = shortServing();                                 // a custom GPU and a custom NVSwitch domain
  s1.hardware = { gpu: customGpu('h100-sxm'), gpus_per_node: 8, intra_node: customLink('nvlink4-nvswitch') };
  s1.serving.parallelism = { tp: 8, pp: 1 };
  out.push({ name: 'custom-h100-hgx', doc: s1 });
  const s2 = readJson('presets/scenarios/I5.3.json');         // pools, the decode pool on another (custom) GPU
  s2.serving.workload.num_requests = 8;
  s2.serving.cluster.pools[1].gpu = customGpu('a100-80g-sxm');
  s2.limits = { max_work_units: 20000 };
  out.push({ name: 'pools-custom-gpu', doc: s2 });
  const s3 = readJson('presets/scenarios/I4.2.json');         // expert parallelism
  s3.serving.workload.num_requests = 8;
  s3.limits = { max_work_units: 20000 };
  out.push({ name: 'moe-expert-parallel', doc: s3 });
  const s4 = shortServing();                                  // an NVL72 domain of custom B200s, wide TP
  s4.hardware = { gpu: customGpu('b200'), gpus_per_node: 72, intra_node: customLink('nvlink5-nvl72') };
  s4.serving.parallelism = { tp: 8, pp: 1 };
  s4.precision = { weights: 'fp8', activations: 'fp8', kv_cache: 'fp8' };
  out.push({ name: 'nvl72-custom-b200', doc: s4 });
  const s5 = shortServing();                                  // an xGMI mesh of custom MI300X
  s5.hardware = { gpu: customGpu('mi300x'), gpus_per_node: 8, intra_node: customLink('xgmi3-mesh8') };
  s5.serving.parallelism = { tp: 4, pp: 1 };
  out.push({ name: 'xgmi-custom-mi300x', doc: s5 });
  const s6 = readJson('presets/scenarios/T2.5.json');         // training with wide EP
  s6.limits = { max_work_units: 20000 };
  out.push({ name: 'training-wide-ep', doc: s6 });
  for (const stack of ['vllm-v1-like', 'sglang-overlap-like']) {  // a custom stack: its running limit and scheduler rules
    const s = shortServing();
    s.hardware = { gpu: customGpu('h200'), gpus_per_node: 1 };
    s.cost_model = { software_stack: { ...readJson(`presets/stacks/${stack}.json`), id: `custom-${stack}` } };
    delete s.serving.scheduler;
    out.push({ name: `custom-stack-${stack}`, doc: s });
  }
  return out;
}
