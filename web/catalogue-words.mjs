// The page's registries.json is the wasm module's catalogue (listRegistries)
// plus the scenario parameters' words (label, unit, help), which only the
// native build carries (engine/scenario/parameter_catalogue.hpp): the page
// reads them from that file alone, so they do not ship a second time inside
// the module. Used by web/build.mjs and tests/wasm/catalogue_file.test.mjs.
import { isDeepStrictEqual } from 'node:util';

/** The words' keys of a parameter's schema entry. */
export const WORD_KEYS = ['label', 'unit', 'help'];

/** `registries` with its parameters' words taken out. */
export function withoutParameterWords(registries) {
  const parameters = registries.parameters.map((p) => Object.fromEntries(Object.entries(p).filter(([k]) => !WORD_KEYS.includes(k))));
  return { ...registries, parameters };
}

/**
 * The catalogue the page reads: `fromCli` (`sightline registries`), once it is
 * checked to be the wasm module's `fromWasm` but for the words; throws naming
 * the first part that differs otherwise (two builds of different sources).
 */
export function withParameterWords(fromWasm, fromCli) {
  if (fromWasm.parameters.some((p) => WORD_KEYS.some((k) => k in p))) throw new Error('the wasm module carries parameter words');
  const bare = withoutParameterWords(fromCli);
  for (const key of new Set([...Object.keys(fromWasm), ...Object.keys(bare)])) {
    if (!isDeepStrictEqual(fromWasm[key], bare[key])) throw new Error(`their catalogues differ in '${key}'`);
  }
  if (!fromCli.parameters.some((p) => p.label)) throw new Error('the CLI gives no parameter words');
  return fromCli;
}
