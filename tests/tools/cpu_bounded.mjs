// Runs a child process under a CPU-time bound, so tests judge "too slow" and
// "hung" on CPU time (the kernel's RLIMIT_CPU), never on the wall clock: a
// busy machine (CI at load 10-14) slows the wall clock, not the CPU a run
// needs. The wall-clock limit is only a very generous outer guard for a
// process that neither computes nor exits (default: one hour).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const timeTool = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const signalNames = Object.fromEntries(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));
let serial = 0;

/**
 * spawnSync(cmd, args, options) with a soft RLIMIT_CPU of `cpuSeconds` (the
 * child gets SIGXCPU past it). Returns spawnSync's result plus:
 *   signal        the child's own signal (also through /usr/bin/time),
 *   cpuS          the child's user + system CPU seconds (null without /usr/bin/time),
 *   cpuExceeded   true when it was stopped for its CPU time,
 *   wallGuardHit  true when only the outer wall-clock guard stopped it.
 */
export function spawnCpuBounded(cmd, args, { cpuSeconds, wallGuardMs = 3600000, ...options }) {
  const timeFile = timeTool ? path.join(os.tmpdir(), `sl-cpu-${process.pid}-${serial++}`) : null;
  const script = timeTool
    ? `ulimit -S -t ${cpuSeconds} && exec ${timeTool} -o "${timeFile}" -f "%U %S" "$0" "$@"`
    : `ulimit -S -t ${cpuSeconds} && exec "$0" "$@"`;
  const res = spawnSync('sh', ['-c', script, cmd, ...args], { ...options, timeout: wallGuardMs });
  let signal = res.signal;
  let status = res.status;
  let cpuS = null;
  if (timeFile && fs.existsSync(timeFile)) {
    const lines = fs.readFileSync(timeFile, 'utf8').trim().split('\n');
    fs.rmSync(timeFile, { force: true });
    const cpu = /([0-9.]+) ([0-9.]+)\s*$/.exec(lines[lines.length - 1] || '');
    if (cpu) cpuS = Number(cpu[1]) + Number(cpu[2]);
    const killed = /terminated by signal (\d+)/.exec(lines.join('\n'));
    if (killed && !signal) {
      signal = signalNames[Number(killed[1])] || `signal ${killed[1]}`;
      status = null;
    }
  }
  const wallGuardHit = res.error?.code === 'ETIMEDOUT';
  const cpuExceeded = signal === 'SIGXCPU' || (cpuS !== null && cpuS > cpuSeconds);
  return { ...res, status, signal, cpuS, cpuExceeded, wallGuardHit };
}
