// CPU seconds of test files, one file at a time (docs/testing.md, "CPU per
// stage and per file"): what bounds CI's wall time on 2 cores is the CPU all
// its work takes, so that is what is measured, never the wall clock.
//
//   node tests/tools/test_cpu.mjs tests/web/serving.test.mjs tests/cli/batch.test.mjs ...
//
// Each file runs as `node --test FILE` from the repository root. Its CPU is
// (1) user + sys of the process and every descendant reaped by a waiting
// parent (this process's cutime + cstime, what /usr/bin/time reports), plus
// (2) the browser's own child processes (renderers, zygote, GPU and utility
// processes): Chromium does not leave them to be reaped that way, so (1) misses
// them; a page whose renderer ran 5.7 s of CPU showed 4.1 s in all under
// /usr/bin/time (2026-11-30). They are sampled every 250 ms from /proc (self
// CPU, the largest value seen per process), so a browser child's last 250 ms
// can be missed. Prints one line per file: user+sys, browser children, total,
// exit code, the browser children by process type; the wall time is printed
// for information only.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TICKS_PER_S = 100;  // USER_HZ on Linux
const SAMPLE_MS = 250;

/** pid -> { ppid, comm, start, cpuS } for every process; `self` adds this process's reaped children's CPU. */
function processes() {
  const all = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      all.set(Number(d), {
        ppid: Number(f[1]), comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), start: f[19],
        cpuS: (Number(f[11]) + Number(f[12])) / TICKS_PER_S, childrenS: (Number(f[13]) + Number(f[14])) / TICKS_PER_S,
      });
    } catch { /* gone meanwhile */ }
  }
  return all;
}

const isBrowser = (p) => p && /chrom/i.test(p.comm);

/** Self CPU of this process's descendants that are browser processes started by a browser process. */
function sampleBrowserChildren(seen) {
  const all = processes();
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of all) if (!mine.has(pid) && mine.has(p.ppid)) { mine.add(pid); grew = true; }
  }
  for (const pid of mine) {
    const p = all.get(pid);
    if (isBrowser(p) && isBrowser(all.get(p.ppid))) {
      const key = `${pid}:${p.start}`;
      if (!seen.has(key)) seen.set(key, { type: processType(pid), cpuS: 0 });
      seen.get(key).cpuS = Math.max(seen.get(key).cpuS, p.cpuS);
    }
  }
}

/** Chromium's --type= of a process (renderer, gpu-process, utility, zygote). */
function processType(pid) {
  try {
    const m = /--type=([a-z-]+)/.exec(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
    return m ? m[1] : 'other';
  } catch { return 'other'; }
}

function reapedChildrenS() {
  return processes().get(process.pid).childrenS;
}

async function measure(file) {
  const before = reapedChildrenS();
  const seen = new Map();
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--test', file], { cwd: repoDir, stdio: ['ignore', 'ignore', 'ignore'] });
  const timer = setInterval(() => sampleBrowserChildren(seen), SAMPLE_MS);
  const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(signal || c)));
  clearInterval(timer);
  const reaped = reapedChildrenS() - before;
  const byType = {};
  for (const { type, cpuS } of seen.values()) byType[type] = (byType[type] || 0) + cpuS;
  const browser = Object.values(byType).reduce((a, b) => a + b, 0);
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  return { file, reaped, browser, byType, total: reaped + browser, wallS, code };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node tests/tools/test_cpu.mjs TEST_FILE...');
  process.exit(2);
}
console.log('cpu_s\tuser+sys_s\tbrowser_children_s\twall_s\texit\tfile\tbrowser children by type');
for (const f of files) {
  const r = await measure(f);
  console.log(`${r.total.toFixed(1)}\t${r.reaped.toFixed(1)}\t${r.browser.toFixed(1)}\t${r.wallS.toFixed(0)}\t${r.code}\t${r.file}\t${Object.entries(r.byType).map(([t, c]) => `${t} ${c.toFixed(1)}`).join(', ')}`);
}
