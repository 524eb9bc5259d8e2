// The C++ sources (.cpp, .hpp) under a folder of the repository, as paths
// relative to its root: the file list the grep tests of this folder scan.
import fs from 'node:fs';
import path from 'node:path';

export function sources(repo, dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(repo, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(repo, rel));
    else if (/\.(cpp|hpp)$/.test(e.name)) out.push(rel);
  }
  return out;
}
