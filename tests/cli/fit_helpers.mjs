// Shared by the fit tests: run the CLI and write inputs into a fresh work folder.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath } from '../wasm/wasm_module.mjs';

export function cli(args) {
  const r = spawnSync(cliPath, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// A work folder and a writer of files into it (objects are written as JSON).
export function workspace(prefix) {
  const work = mkdtempSync(path.join(tmpdir(), prefix));
  const write = (name, content) => {
    const p = path.join(work, name);
    writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
    return p;
  };
  return { work, write };
}
