/* The Calibrate tab's worker: the benchmark readers and the fit, in their own
 * wasm module (sightline-calibrate.mjs / .wasm at the site's root, loaded only
 * when the user gives the tab a file; wasm/CMakeLists.txt says why). Runs with
 * a calibration stay on the page's engine worker (worker.js, applyCalibration).
 */
import createCalibrate from '../sightline-calibrate.mjs';
import { MSG } from '../shared/protocol.js';
import { post, postError, loadEngine, simple } from './replies.js';

const enginePromise = loadEngine(createCalibrate, import.meta.url);

self.onmessage = (event) => {
  const msg = event.data || {};
  const { id, type } = msg;
  const payload = msg.payload || {};
  switch (type) {
    case MSG.IMPORT_BENCH:
      simple(enginePromise, id, (engine) => engine.importBenchFile(String(payload.name), String(payload.text), ''));
      break;
    case MSG.FIT:
      // One blocking call; each replay's progress is posted from inside it.
      simple(enginePromise, id, (engine) => engine.fitCalibration(JSON.stringify(payload.request),
        (p) => post(id, MSG.PROGRESS, { progress: Math.min(1, Math.max(0, Number(p) || 0)) })));
      break;
    default:
      postError(id, { code: 'bad_request', message: `unknown message type '${type}' for the calibration worker` });
  }
};
