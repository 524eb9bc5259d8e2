// Loads the built wasm module under Node (passing the bytes: Node's global
// fetch cannot load a file path, see ../shared/TOOLCHAIN.md).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const cliPath = process.env.SIGHTLINE_CLI || path.join(repoRoot, 'build', 'sightline');
// SIGHTLINE_WASM_DIR: another build's module (e.g. an older commit's, to show a
// regression test fails there).
const wasmDir = process.env.SIGHTLINE_WASM_DIR || path.join(repoRoot, 'build-wasm', 'wasm');

/** The page's module, or `name` (sightline-calibrate: the Calibrate tab's, wasm/CMakeLists.txt). */
export async function loadWasm(name = 'sightline') {
  const require = createRequire(import.meta.url);
  const createSightline = require(path.join(wasmDir, `${name}.js`));
  return createSightline({ wasmBinary: readFileSync(path.join(wasmDir, `${name}.wasm`)) });
}
