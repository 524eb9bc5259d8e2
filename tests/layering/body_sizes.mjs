#!/usr/bin/env node
// Sizes of the functions and files of engine/ (C++) and of the page's modules
// (web/src, JavaScript), against the limits of the contributors' guide: no
// function body over 120 lines, no file over 600.
//
//   node tests/layering/body_sizes.mjs [repo-root] [--all]
//
// Prints each function and file over its limit (largest first), marking those
// on body_sizes_allowed.json's list; --all prints every function over 60 lines.
// Exits 1 when an offender is not on the allowed list, or when an allowed entry
// no longer exceeds its limit (remove it, so the list only shrinks; the ctest
// test only reports the latter).
//
// The scanner reads C++ lightly: comments, string and character literals
// (raw strings included) are blanked, then every brace block at namespace or
// class level whose header ends in a parameter list (plus const, noexcept,
// override, a trailing return type or a constructor's initializer list) is a
// function; its size runs from the header's first line to the closing brace.
// JavaScript the same way, with its own literals blanked (template literals and
// their ${} expressions, regular expressions): a block at the top level or in a
// class whose header ends in a parameter list (a function, a method) or in `=>`
// (an arrow function) is a function; `if (...) {`, `for (...) {` and the other
// statements are not. A function inside another counts within it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FUNCTION_LIMIT = 120;
export const FILE_LIMIT = 600;

// Comments and literals replaced by spaces (newlines kept, so lines still count).
export function blankLiterals(text) {
  let out = '';
  let i = 0;
  const n = text.length;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < n) {
    const c = text[i];
    const d = text[i + 1];
    if (c === '/' && d === '/') {
      const e = text.indexOf('\n', i);
      const end = e < 0 ? n : e;
      out += blank(text.slice(i, end));
      i = end;
    } else if (c === '/' && d === '*') {
      const e = text.indexOf('*/', i + 2);
      const end = e < 0 ? n : e + 2;
      out += blank(text.slice(i, end));
      i = end;
    } else if (c === 'R' && d === '"' && !/[A-Za-z0-9_]/.test(text[i - 1] || '')) {
      const open = text.indexOf('(', i + 2);
      const delim = text.slice(i + 2, open);
      const e = text.indexOf(')' + delim + '"', open);
      const end = e < 0 ? n : e + delim.length + 2;
      out += 'R' + blank(text.slice(i + 1, end));
      i = end;
    } else if (c === '"' || (c === "'" && !/[0-9A-Fa-f]/.test(text[i - 1] || ''))) {
      // A quote after a hex digit is a digit separator (1'000), not a character literal.
      let j = i + 1;
      while (j < n && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out += c + blank(text.slice(i + 1, j)) + (j < n ? text[j] : '');
      i = j + 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

// The characters after which a `/` starts a regular expression rather than a division.
const REGEX_AFTER = new Set([...'(,=:[!&|?{};+-*%<>~^'].concat(['']));
const REGEX_KEYWORDS = /(?:^|[^\w$])(?:return|typeof|case|of|in|void|delete|throw|else|yield|await)$/;

/** Whether a `/` after the text `before` starts a regular expression (else it divides). */
function regexAfter(before) {
  const b = before.replace(/\s+$/, '');
  return REGEX_AFTER.has(b.slice(-1)) || REGEX_KEYWORDS.test(b);
}

// JavaScript's comments and literals replaced by spaces (newlines kept): strings,
// template literals with their ${} expressions, regular expressions.
export function blankJsLiterals(text) {
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  const n = text.length;
  let out = '';
  let i = 0;
  // The end (exclusive) of the template literal opening at `start` (a backquote).
  const templateEnd = (start) => {
    let j = start + 1;
    while (j < n && text[j] !== '`') {
      if (text[j] === '\\') j += 2;
      else if (text[j] === '$' && text[j + 1] === '{') j = expressionEnd(j + 2);
      else j += 1;
    }
    return Math.min(n, j + 1);
  };
  // The end (after its closing brace) of a ${} expression whose text starts at `start`.
  const expressionEnd = (start) => {
    let depth = 1;
    let j = start;
    while (j < n && depth > 0) {
      const c = text[j];
      if (c === '`') j = templateEnd(j);
      else if (c === '"' || c === "'") j = stringEnd(j);
      else if (c === '/' && regexAfter(text.slice(start, j))) j = regexEnd(j);
      else {
        if (c === '{') depth += 1;
        else if (c === '}') depth -= 1;
        j += 1;
      }
    }
    return j;
  };
  const stringEnd = (start) => {
    let j = start + 1;
    while (j < n && text[j] !== text[start] && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
    return Math.min(n, j + 1);
  };
  const regexEnd = (start) => {
    let j = start + 1;
    let inClass = false;
    while (j < n && text[j] !== '\n' && (inClass || text[j] !== '/')) {
      if (text[j] === '\\') j += 1;
      else if (text[j] === '[') inClass = true;
      else if (text[j] === ']') inClass = false;
      j += 1;
    }
    j += 1;
    while (j < n && /[a-z]/.test(text[j])) j += 1;
    return j;
  };
  while (i < n) {
    const c = text[i];
    const d = text[i + 1];
    let end = -1;
    if (c === '/' && d === '/') {
      const e = text.indexOf('\n', i);
      end = e < 0 ? n : e;
    } else if (c === '/' && d === '*') {
      const e = text.indexOf('*/', i + 2);
      end = e < 0 ? n : e + 2;
    } else if (c === '`') end = templateEnd(i);
    else if (c === '"' || c === "'") end = stringEnd(i);
    else if (c === '/' && regexAfter(out)) end = regexEnd(i);
    if (end < 0) {
      out += c;
      i += 1;
    } else {
      out += blank(text.slice(i, end));
      i = end;
    }
  }
  return out;
}

const FUNCTION_TAIL =
  /\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?(?:->\s*[\w:<>,\s*&]+)?(?::\s*[\s\S]*)?$/;

// A JavaScript block header that is a statement (if, for, ...), not a function.
const JS_STATEMENT = /^(?:else\s+)?(?:if|for|while|switch|catch|with|do|try|finally|else)\b/;
const JS_FUNCTION_TAIL = /(?:\)|=>)\s*$/;

// Functions of one source text: [{name, line, lines}], line 1-based; `js`: the text is JavaScript.
export function functionsOf(text, { js = false } = {}) {
  const src = js ? blankJsLiterals(text) : blankLiterals(text);
  const lineAt = [];
  let line = 1;
  for (let i = 0; i < src.length; i++) {
    lineAt.push(line);
    if (src[i] === '\n') line += 1;
  }
  const out = [];
  // Stack of open blocks: 'scope' (namespace, class, extern "C"), 'function' or another block.
  const stack = [];
  let headerStart = 0;  // where the text since the last ; { } begins
  // JavaScript: open parentheses. A brace inside them (a destructured parameter, an
  // object argument, an arrow function passed) leaves the header running.
  let parens = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (js && (c === '(' || c === ')')) {
      parens = Math.max(0, parens + (c === '(' ? 1 : -1));
    } else if (c === ';') {
      if (!parens) headerStart = i + 1;
    } else if (c === '{' && parens) {
      const inBody = stack.some((b) => b.kind !== 'scope');
      const trimmed = src.slice(headerStart, i).trim();
      let start = headerStart;
      while (start < i && /\s/.test(src[start])) start += 1;
      const fn = !inBody && !JS_STATEMENT.test(trimmed) && JS_FUNCTION_TAIL.test(trimmed);  // a function passed: an arrow, function (...)
      stack.push({ kind: fn ? 'function' : 'inner', start, header: trimmed, keepHeader: true });
    } else if (c === '{') {
      const inBody = stack.some((b) => b.kind !== 'scope');
      const header = src.slice(headerStart, i);
      const trimmed = header.trim();
      let kind = 'other';
      if (!inBody && js) {
        if (/^(?:export\s+)?(?:default\s+)?class\b/.test(trimmed)) kind = 'scope';
        else if (!JS_STATEMENT.test(trimmed) && trimmed.includes('(') && JS_FUNCTION_TAIL.test(trimmed)) kind = 'function';
      } else if (!inBody) {
        if (/\bnamespace\b/.test(trimmed) || /^extern\s*$/.test(trimmed) || trimmed === 'extern') kind = 'scope';
        else if (/^(?:template\s*<[^{]*>\s*)?(?:struct|class|union)\b/.test(trimmed) && !/\)\s*$/.test(trimmed)) kind = 'scope';
        else if (/^(?:enum)\b/.test(trimmed)) kind = 'other';
        else if (!/=\s*$/.test(trimmed) && trimmed.includes('(') && FUNCTION_TAIL.test(trimmed)) kind = 'function';
      }
      let start = headerStart;
      while (start < i && /\s/.test(src[start])) start += 1;
      stack.push({ kind, start, header: trimmed });
      headerStart = i + 1;
    } else if (c === '}') {
      const b = stack.pop();
      if (b && b.kind === 'function') {
        const first = lineAt[b.start];
        const last = lineAt[i];
        const header = b.header.replace(/\s+/g, ' ');
        const m = (js && header.match(/^(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*=/)) || header.match(/([~\w:$]+(?:operator\s*\S+)?)\s*\(/);
        out.push({ name: m ? m[1] : b.header.slice(0, 40), line: first, lines: last - first + 1 });
      }
      if (!(b && b.keepHeader)) headerStart = i + 1;
    }
  }
  return out;
}

function sourceFiles(dir, pattern, rel = '') {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(dir, pattern, r));
    else if (pattern.test(e.name)) out.push(r);
  }
  return out.sort();
}

// The trees measured: engine/'s C++ and the page's modules (web/src; vendor code
// and the Emscripten glue are build outputs, not there).
export const TREES = [
  { dir: 'engine', pattern: /\.(cpp|hpp|h|cc)$/, js: false },
  { dir: path.join('web', 'src'), pattern: /\.(js|mjs)$/, js: true },
];

// Every function over `minLines` and every file over FILE_LIMIT in TREES (those of them under `root`).
export function measure(root, minLines = FUNCTION_LIMIT) {
  const functions = [];
  const files = [];
  for (const tree of TREES) {
    const dir = path.join(root, tree.dir);
    if (!fs.existsSync(dir)) continue;
    for (const rel of sourceFiles(dir, tree.pattern)) {
      const text = fs.readFileSync(path.join(dir, rel), 'utf8');
      const file = path.posix.join(...tree.dir.split(path.sep), ...rel.split(path.sep));
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      if (lines > FILE_LIMIT) files.push({ file, lines });
      for (const f of functionsOf(text, { js: tree.js })) if (f.lines > minLines) functions.push({ file, ...f });
    }
  }
  functions.sort((a, b) => b.lines - a.lines);
  files.sort((a, b) => b.lines - a.lines);
  return { functions, files };
}

export function loadAllowed(root) {
  return JSON.parse(fs.readFileSync(path.join(root, 'tests', 'layering', 'body_sizes_allowed.json'), 'utf8'));
}

// Offenders not on the list, and list entries that are no longer offenders.
export function check(root, allowed = loadAllowed(root)) {
  const { functions, files } = measure(root);
  const fnKey = (f) => `${f.file}:${f.name}`;
  const allowedFns = new Map(allowed.functions.map((a) => [`${a.file}:${a.name}`, a]));
  const allowedFiles = new Map(allowed.files.map((a) => [a.file, a]));
  const unexpected = [
    ...functions.filter((f) => !allowedFns.has(fnKey(f))).map((f) => `${f.file}:${f.line} ${f.name} is ${f.lines} lines (limit ${FUNCTION_LIMIT})`),
    ...files.filter((f) => !allowedFiles.has(f.file)).map((f) => `${f.file} is ${f.lines} lines (limit ${FILE_LIMIT})`),
  ];
  const seenFns = new Set(functions.map(fnKey));
  const seenFiles = new Set(files.map((f) => f.file));
  const stale = [
    ...allowed.functions.filter((a) => !seenFns.has(`${a.file}:${a.name}`)).map((a) => `${a.file}:${a.name}`),
    ...allowed.files.filter((a) => !seenFiles.has(a.file)).map((a) => a.file),
  ];
  return { functions, files, unexpected, stale };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const all = args.includes('--all');
  const root = args.find((a) => !a.startsWith('--')) || path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const { functions, files, unexpected, stale } = check(root);
  const allowed = loadAllowed(root);
  const onList = new Set([...allowed.functions.map((a) => `${a.file}:${a.name}`), ...allowed.files.map((a) => a.file)]);
  const shown = all ? measure(root, 60).functions : functions;
  console.log(`functions over ${all ? 60 : FUNCTION_LIMIT} lines: ${shown.length}`);
  for (const f of shown)
    console.log(`  ${String(f.lines).padStart(4)}  ${f.file}:${f.line} ${f.name}${onList.has(`${f.file}:${f.name}`) ? '  (allowed)' : ''}`);
  console.log(`files over ${FILE_LIMIT} lines: ${files.length}`);
  for (const f of files) console.log(`  ${String(f.lines).padStart(4)}  ${f.file}${onList.has(f.file) ? '  (allowed)' : ''}`);
  for (const u of unexpected) console.log(`NOT ALLOWED: ${u}`);
  for (const s of stale) console.log(`NO LONGER OVER ITS LIMIT (remove from body_sizes_allowed.json): ${s}`);
  process.exit(unexpected.length || stale.length ? 1 : 0);
}
