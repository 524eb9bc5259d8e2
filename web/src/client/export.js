// Downloads (result JSON, scenario JSON, per-row CSV, chart PNG/SVG) and the
// scenario-file import. Files are made from data with Blob + an <a download>;
// nothing read from a file is ever inserted as HTML.

/** Saves `data` (Blob or string) as `filename`. */
export function download(filename, data, type = 'application/octet-stream') {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A file-name-safe slug of untrusted text. */
export function slug(text, fallback = 'scenario') {
  const s = String(text ?? '').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return s || fallback;
}

function csvCell(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return String(value);
  let s = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // Spreadsheets run cells that start with these as formulas.
  if (/^[=+@\t\r]/.test(s) || (/^-/.test(s) && !/^-[\d.]/.test(s))) s = `'${s}`;
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV text of rows of objects; columns are the union of keys, in first-seen order. */
export function toCsv(rows, columns) {
  const cols = columns || [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const lines = [cols.map(csvCell).join(',')];
  for (const r of rows) lines.push(cols.map((c) => csvCell(r[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** Reads a File as text, refusing files far larger than any scenario. */
export function readScenarioFile(file, maxBytes = 4 * 1024 * 1024) {
  if (file.size > maxBytes) {
    return Promise.reject(Object.assign(new Error(`${file.name} is ${Math.round(file.size / 1024)} KiB; a scenario file is at most ${maxBytes / 1048576} MiB`), { code: 'file_too_large', path: '' }));
  }
  return file.text();
}
