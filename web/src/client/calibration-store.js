// The applied cluster calibration (the file `sightline fit` writes, fitted in
// the Calibrate tab or opened from a link) kept in this browser's localStorage.
// Its name is the calibration's own `id`: the engine reports it on every result
// it prices (result.calibration.id, the "calibrated with NAME" chip), so a
// rename changes the id. Nothing here touches the DOM; a storage that is full
// or disabled keeps the calibration for this page's life only.

const STORAGE_KEY = 'sightline.calibration';
const MAX_NAME_CHARS = 80;

let memory = null;  // the calibration when storage cannot hold it

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The applied calibration (a copy), or null. */
export function applied() {
  let text = null;
  try {
    text = localStorage.getItem(STORAGE_KEY);
  } catch (_) { /* storage disabled */ }
  if (text === null) return memory ? structuredClone(memory) : null;
  try {
    const cal = JSON.parse(text);
    return isObject(cal) && typeof cal.id === 'string' ? cal : null;
  } catch (_) {
    return null;  // damaged by hand: as if none were applied
  }
}

/** The applied calibration's name, or '' when none is. */
export function appliedName() {
  const cal = applied();
  return cal ? cal.id : '';
}

/** Applies `calibration` (a calibration file's object) from now on; returns the name it is kept under. */
export function apply(calibration) {
  if (!isObject(calibration) || typeof calibration.id !== 'string') throw new TypeError('a calibration is an object with an id');
  memory = structuredClone(calibration);
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(calibration));
  } catch (_) { /* kept in memory only */ }
  return calibration.id;
}

/** A name the user typed, trimmed; null when it is empty or too long. */
export function checkedName(name) {
  const n = String(name ?? '').trim();
  return n && n.length <= MAX_NAME_CHARS ? n : null;
}

/** Renames the applied calibration; false when none is applied or the name is not usable. */
export function rename(name) {
  const cal = applied();
  const n = checkedName(name);
  if (!cal || !n) return false;
  cal.id = n;
  apply(cal);
  return true;
}

/** Stops applying any calibration. */
export function remove() {
  memory = null;
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch (_) { /* nothing stored */ }
}
