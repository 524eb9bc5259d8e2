// Issue 34's rule, checked on the source: every JSON text is read by the one
// reader (engine/core/json_text), every number in a text format by the one
// number parser (engine/core/csv), and every CSV by CsvTable (cells by column
// name, so no std::map::at on a user's columns). Any other parse call in
// engine/ or wasm/ is a finding "file:line: what".
import fs from 'node:fs';
import path from 'node:path';

// The modules that may call the parsers they wrap.
export const parserModules = [
  'engine/core/json_text.cpp', 'engine/core/json_text.hpp', 'engine/core/csv.cpp', 'engine/core/csv.hpp',
  'engine/core/error_boundary.cpp', 'engine/core/error_boundary.hpp',
  'engine/cli/command_boundary.cpp', 'engine/cli/command_boundary.hpp',
];

// Bench helper removes these: the benchmark-file importer and `fit` are being
// moved onto the reader and the number parser on their own branch; the lead
// empties this list at the merge.
export const allowList = [];

const rules = [
  { re: /\b(?:nlohmann::)?json::parse\s*\(/, what: 'json::parse outside the one JSON reader (use parse_json_text, parse_json_document or read_engine_envelope)' },
  { re: /\bstd::sto(?:i|l|ll|ul|ull|f|d|ld)\s*\(/, what: 'std::sto* outside the one number parser (use read_decimal_token / read_integer_token or CsvTable)' },
  { re: /\b(?:atof|atoi|atol|atoll|strtod|strtof|strtold|strtol|strtoll|strtoul|strtoull|sscanf)\s*\(/, what: 'C number parsing outside the one number parser' },
];
// A file that reads CSV reads its cells through CsvTable, never with .at( on a map of columns.
const csvReader = /\b(?:CsvTable|csv_lines|csv_split_fields|csv_split_cells)\b/;

// `line` without a // comment (one not inside a string literal).
function code(line) {
  let quoted = false;
  for (let i = 0; i < line.length - 1; ++i) {
    if (line[i] === '\\') { ++i; continue; }
    if (line[i] === '"') quoted = !quoted;
    else if (!quoted && line[i] === '/' && line[i + 1] === '/') return line.slice(0, i);
  }
  return line;
}

function sources(root, dir, out = []) {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return out;
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) sources(root, rel, out);
    else if (/\.(cpp|hpp|h|cc)$/.test(e.name)) out.push(rel.split(path.sep).join('/'));
  }
  return out;
}

// Findings "file:line: what" for the tree at `root`.
export function check(root, { allowed = allowList } = {}) {
  const findings = [];
  for (const file of [...sources(root, 'engine'), ...sources(root, 'wasm')]) {
    if (parserModules.includes(file) || allowed.includes(file)) continue;
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n').map(code);
    const readsCsv = lines.some((l) => csvReader.test(l));
    lines.forEach((l, i) => {
      for (const r of rules) if (r.re.test(l)) findings.push(`${file}:${i + 1}: ${r.what}`);
      if (readsCsv && /\.at\s*\(\s*(?!\d)/.test(l)) findings.push(`${file}:${i + 1}: .at( in a CSV reader (use CsvTable's located cells)`);
    });
  }
  return findings;
}
