// The page's engine, started by index.html's first script: its worker fetches
// and compiles the wasm module while the page's own modules (app.js and the
// thirty it imports) are still loading, and the catalogue and the preset lists
// are asked for at once, to be answered as soon as the engine is ready
// (web/budgets.mjs reports where the first result's time goes). app.js imports
// this module too: the same instance, one worker.
import { EngineClient } from './engine-client.js';

export const workerUrl = new URL('./worker/worker.js', import.meta.url);
export const client = new EngineClient(workerUrl);

const PRESET_KINDS = ['scenarios', 'models', 'gpus', 'interconnects', 'kv_tiers', 'validation'];

/** The engine's catalogue (registries.json) and its preset lists by kind, asked for now. */
export const startup = {
  readyMs: null,  // when the engine said READY, ms after navigation
  registries: client.registries(),
  presets: Object.fromEntries(PRESET_KINDS.map((kind) => [kind, client.presets(kind)])),
};
client.addEventListener('ready', () => { if (startup.readyMs === null) startup.readyMs = performance.now(); });
// app.js awaits each one and reports a failure; until then a rejection is not unhandled.
for (const p of [startup.registries, ...Object.values(startup.presets)]) p.catch(() => {});
