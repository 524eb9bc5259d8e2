// Python's json module writes the bare literals Infinity, -Infinity and NaN,
// and published model configs (Nemotron-H) and benchmark files carry them.
// The engine's reader takes each as a string (engine/core/json_text.cpp,
// quote_nonstandard_literals, which warns about them); the page reads a pasted
// config.json the same way, and the aimed fuzzer's judge
// (tests/fuzz/surface_judge.mjs) reads a user's document as the engine does.
// Pure: no DOM, so Node imports it as it is.

const WORD = /[A-Za-z0-9_]/;
const LITERALS = ['-Infinity', 'Infinity', 'NaN'];

/**
 * `text` with each bare Infinity, -Infinity and NaN outside strings written as
 * a string ("Infinity"); `text` itself when it has none. Only outside strings:
 * a value such as "http://localhost:-Infinity" is text, and quoting inside it
 * broke the document, so a file the engine read was judged "not JSON" (aimed
 * fuzz, fit surface, seed 44, case 7422). A literal glued to a word (NaNa,
 * xInfinity) is not one.
 */
export function quoteNonstandardLiterals(text) {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') { inString = true; continue; }
    if (i > 0 && WORD.test(text[i - 1])) continue;
    const lit = LITERALS.find((l) => text.startsWith(l, i) && !WORD.test(text[i + l.length] ?? ' '));
    if (!lit) continue;
    out += `${text.slice(from, i)}"${lit}"`;
    i += lit.length - 1;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
