// The grep tests' one line scanner: each line of a file whose code (its line
// comment cut off) matches a pattern, as "file:line: text". With
// `docComments`, lines of a block comment (starting with /* or "* ", the JSDoc
// style of web/src) are skipped too: there a comment may name what the code
// must not spell, to explain it. Off for C++, where a line may start with a
// dereference.
export function lineFindings(file, text, pattern, { docComments = false } = {}) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    const code = docComments && /^\s*(\/\*|\*(\s|\/|$))/.test(line) ? '' : line.replace(/\/\/.*$/, '');
    if (pattern.test(code)) out.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return out;
}
