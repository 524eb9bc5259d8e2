// The benchmark-file readers' key rule (engine/fit/bench_import_keys.hpp): every
// reader's result passes through the one shared check of unread keys, and every
// format has its own list of keys not read. A reader added beside the others
// that skips the check, or brings its own list, is named here.
import fs from 'node:fs';
import path from 'node:path';

const fitDir = (root) => path.join(root, 'engine', 'fit');
const read = (root, f) => fs.readFileSync(path.join(fitDir(root), f), 'utf8');

// The body of the function `name` in `text` (from its first '{' to the matching '}').
function body(text, name) {
  const at = text.search(new RegExp(`\\b${name}\\([^;{]*\\)\\s*(const\\s*)?\\{`));
  if (at < 0) return null;
  let i = text.indexOf('{', at), depth = 0;
  for (let j = i; j < text.length; ++j) {
    if (text[j] === '{') ++depth;
    else if (text[j] === '}' && --depth === 0) return text.slice(i, j + 1);
  }
  return null;
}

export function check(root) {
  const problems = [];
  const files = fs.readdirSync(fitDir(root)).filter((f) => /^bench_import.*\.cpp$/.test(f));
  const readers = [...read(root, 'bench_import_readers.hpp').matchAll(/^(?:BenchRun|std::vector<BenchRun>) (read_\w+)\(/gm)].map((m) => m[1]);
  if (readers.length === 0) problems.push('bench_import_readers.hpp: no reader found');
  const dispatch = read(root, 'bench_import.cpp');
  const readObject = body(dispatch, 'read_object') ?? '';
  for (const reader of readers) {
    // A reader is called from read_object, which checks every key after it, or checks its own lines.
    const own = files.map((f) => body(read(root, f), reader)).find((b) => b !== null) ?? '';
    const checked = readObject.includes(`${reader}(`) || /refuse_unread_(keys|lines)\(/.test(own);
    if (!checked) problems.push(`${reader}: its runs do not pass through refuse_unread_keys / refuse_unread_lines`);
    if (/refuse_unread_(keys|lines)\(/.test(own)) continue;
    // Otherwise every call is read_object's: a call elsewhere would skip the check.
    const count = (t) => [...t.matchAll(new RegExp(`\\b${reader}\\(`, 'g'))].length;
    const all = files.reduce((n, f) => n + count(read(root, f)), 0) - 1;  // less its definition
    if (all > count(readObject)) problems.push(`${reader}: called outside read_object, which checks the keys`);
  }
  if (!/refuse_unread_keys\(/.test(readObject.split(/\bread_\w+_(object|report|export)\(/).pop() ?? ''))
    problems.push('bench_import.cpp: read_object does not check the keys after the readers');
  // One list per format, in bench_import_ignored.cpp, and no list of keys elsewhere.
  const formats = [...(dispatch.match(/bench_formats\(\) \{[^}]*\{([^}]*)\}/)?.[1] ?? '').matchAll(/"([\w-]+)"/g)].map((m) => m[1]);
  if (formats.length < 6) problems.push('bench_import.cpp: bench_formats() not found');
  const lists = read(root, 'bench_import_ignored.cpp');
  for (const f of formats) if (!lists.includes(`{"${f}", &k`)) problems.push(`bench_import_ignored.cpp: no list for the format '${f}'`);
  for (const f of files) {
    if (f === 'bench_import_ignored.cpp' || f === 'bench_import_keys.cpp') continue;
    if (/\bIgnoredKey\b|is_latency_statistic|kIgnored\w*Keys/.test(read(root, f))) problems.push(`${f}: a list of keys not read outside bench_import_ignored.cpp`);
  }
  return problems;
}
