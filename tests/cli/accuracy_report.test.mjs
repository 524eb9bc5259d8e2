// The accuracy report meets the cost-model issue's bounds, and the accuracy
// page shows its figures. Its own file (not calibration.test.mjs's), so that
// it and the calibrations' regeneration, the two longest CLI tests, run side
// by side under CI's two test lanes. Needs the shared data next to the
// repository (../shared/data), as CI has it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const dataDir = path.resolve(repoRoot, '..', 'shared', 'data');
const skip = existsSync(dataDir) ? false : `shared data not found at ${dataDir}`;
// Median |error| bounds per fused kernel under 1,024 tokens (2026-11-29: RoPE
// 15.6%, SiLU-and-mul 7.5%, add + RMSNorm 4.4%; before the fixed times 19.1%, 9.7%, 21.7%).
const SMALL_MEDIAN = { rope: 0.17, activation: 0.10, add_norm: 0.08 };

test('accuracy report: GEMM leave-one-model-out median <= 8%, collectives >= 1 MiB median <= 10%, fused kernels within 15%, MoE grouped GEMMs as timed; the accuracy page shows it', { skip }, async () => {
  const report = JSON.parse(execFileSync(cliPath, ['report-accuracy', '--data', dataDir, '--format', 'json', '--max-work-units', '240000000']).toString());
  for (const [gpu, r] of Object.entries(report.leave_one_model_out)) {
    assert.ok(r.models >= 6, `${gpu}: at least 6 models`);
    assert.ok(r.by_class.gemm.median_ape <= 0.08, `${gpu} GEMM median ${r.by_class.gemm.median_ape}`);
  }
  for (const [link, r] of Object.entries(report.collectives.leave_one_out)) {
    assert.ok(r.samples >= 4, link);
    assert.ok(r.median_ape <= 0.10, `${link} median ${r.median_ape}`);
  }
  // docs/accuracy.md's first table quotes this report (the same run): median / p90 per class, leave one
  // model out on the A100 and the A40, and the cross-generation medians both ways.
  const pct = (x) => (100 * x >= 100 ? `${(100 * x).toFixed(0)}%` : `${(100 * x).toFixed(1)}%`);
  const docLines = readFileSync(path.join(repoRoot, 'docs', 'accuracy.md'), 'utf8').split('\n');
  const lomo = report.leave_one_model_out, cross = report.cross_generation;
  for (const [cls, label] of [['gemm', 'GEMM'], ['activation', 'activation'], ['norm', 'norm'], ['residual_add', 'residual add'],
    ['rope', 'rope'], ['embedding', 'embedding']]) {
    const cell = (r) => `${pct(r.median_ape)} / ${pct(r.p90_ape)}`;
    const row = `| ${label} | ${cell(lomo['a100-80g-sxm'].by_class[cls])} | ${cell(lomo.a40.by_class[cls])} | ` +
      `${pct(cross['a100-80g-sxm -> a40'][cls].median_ape)} | ${pct(cross['a40 -> a100-80g-sxm'][cls].median_ape)} |`;
    assert.ok(docLines.includes(row), `docs/accuracy.md's kernel table is stale for ${label}; the report gives:\n${row}`);
  }
  // The cross-generation tier is reported, not hidden: GEMMs transfer well between A100 and A40.
  assert.ok(report.cross_generation['a100-80g-sxm -> a40'].gemm.median_ape < 0.15);
  // Target-measured H100 per operator family (leave one shape group out of our sweep), issue 22's bound
  // of 10%. The elementwise class (device copies, 13.3%) is not held to it yet: see docs/accuracy.md.
  const h100 = report.leave_one_group_out['h100-sxm'].by_class;
  for (const cls of ['gemm', 'attention_prefill', 'attention_decode', 'norm', 'residual_add', 'activation', 'rope'])
    assert.ok(h100[cls].median_ape <= 0.10, `h100-sxm ${cls} median ${h100[cls].median_ape}`);
  // Leave-one-GPU-out (issue 36): every measured GPU left out in turn, priced
  // from the nearest other one; GEMMs transfer within 10% at the median.
  const left = Object.entries(report.leave_one_gpu_out);
  assert.ok(left.length >= 4, JSON.stringify(Object.keys(report.leave_one_gpu_out)));
  for (const [gpu, r] of left) {
    assert.notEqual(r.from, gpu);
    assert.ok(r.by_class.gemm.median_ape <= 0.10, `${gpu} from ${r.from}: GEMM median ${r.by_class.gemm.median_ape}`);
  }
  // Kernels as the stacks launch them (issue 36): at the H200's target-measured
  // tier, every stack that fuses RoPE, SiLU-and-mul and add + RMSNorm prices the
  // fused kernel within 15% of the single-pass kernels timed on the H200 at
  // prefill sizes (1,024+ tokens) of Llama-2-7B and Llama-3-70B at TP 1 and
  // Llama-3-70B at TP 8 (the range tests/unit/test_fused_kernels.cpp holds too);
  // eager PyTorch (training) keeps the eager chains. Under 1,024 tokens the
  // kernels are far from bandwidth-bound and priced at their fixed times
  // (perf/single_pass_fit.hpp): held per family at the median, and add + RMSNorm
  // row by row; the RoPE and SiLU-and-mul rows that stay outside 15% are listed
  // in docs/acceptance-36.md with the reason.
  const fused = Object.values(report.fused_kernels);
  assert.ok(fused.length >= 1, 'a fused-kernel sweep is reported');
  let fusing = 0;
  for (const f of fused) {
    for (const g of f.groups) {
      const launched = ['rope', 'activation', 'add_norm'].map((k) => g.by_kernel[k].launched_as);
      if (g.stacks.includes('pytorch-eager')) assert.deepEqual(launched, ['eager chain', 'eager chain', 'eager chain']);
      if (!launched.every((l) => l === 'one fused kernel')) continue;
      fusing += g.stacks.length;
      for (const k of ['rope', 'activation', 'add_norm']) {
        const rows = g.by_kernel[k].rows.filter((r) => r.tokens >= 1024);
        assert.ok(rows.length >= 9 && rows.some((r) => r.tp === 8), `${f.gpu} ${k}: ${rows.length} rows`);
        for (const r of rows) {
          const err = r.target_measured_us / r.measured_us - 1;
          assert.ok(Math.abs(err) <= 0.15, `${f.gpu} ${g.stacks} ${k} ${r.model} ${r.tokens} tokens: ${(100 * err).toFixed(1)}%`);
        }
        const small = g.by_kernel[k].ranges['under 1024 tokens'].target_measured;
        assert.ok(small.samples >= 12, `${f.gpu} ${k}: ${small.samples} rows under 1,024 tokens`);
        assert.ok(small.median_ape <= SMALL_MEDIAN[k], `${f.gpu} ${k} under 1,024 tokens: median ${small.median_ape}`);
        if (k === 'add_norm') assert.ok(small.max_ape <= 0.20, `${f.gpu} add_norm under 1,024 tokens: max ${small.max_ape}`);
      }
    }
  }
  assert.ok(fusing >= 4, 'the serving stacks fuse');
  // MoE grouped GEMMs timed on an H200 (presets/calibrations/moe_bench.py,
  // docs/cost-model.md "Grouped expert GEMMs"): the sorted-token kernel the
  // vLLM/SGLang presets run is priced within 10% at decode, decode weight
  // streaming within 10% at 0.4-56 GB of weights, and routed splits at 128-512
  // tokens per expert within 25% (30.6% when every expert was priced at the
  // mean: the routing draw's padded tiles close half the gap).
  const moe = Object.values(report.grouped_gemms);
  assert.ok(moe.length >= 1, 'a MoE sweep is reported');
  for (const f of moe) {
    const range = (name) => {
      assert.ok(f.ranges[name], `${f.gpu}: no range "${name}"`);
      return f.ranges[name].target_measured;
    };
    const decode = range('triton-sorted-tokens:balanced bf16, 1-64 per expert');
    assert.ok(decode.samples >= 30 && decode.median_ape <= 0.10, `${f.gpu} Triton decode: ${JSON.stringify(decode)}`);
    const streaming = range('decode weight streaming, llama-3-8b layers');
    assert.ok(streaming.median_ape <= 0.10, `${f.gpu} weight streaming: ${JSON.stringify(streaming)}`);
    const routed = range('torch._grouped_mm:routed bf16, 128-512 per expert');
    assert.ok(Math.abs(routed.median_signed) <= 0.25, `${f.gpu} routed 128-512: ${JSON.stringify(routed)}`);
  }
  // The accuracy page shows these figures as the engine computed them (one
  // run of the report serves both checks: it takes minutes of CPU).
  const { tables, render } = await import(pathToFileURL(path.join(repoRoot, 'web', 'accuracy-tables.mjs')).href);
  const html = readFileSync(path.join(repoRoot, 'web', 'src', 'host', 'accuracy.html'), 'utf8');
  assert.equal(render(html, tables(report)), html, 'web/src/host/accuracy.html is stale: run node web/accuracy-tables.mjs');
});
