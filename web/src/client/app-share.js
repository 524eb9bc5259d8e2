// What leaves the page and what an embed is: the share link and the embed code
// (with the applied calibration only when ticked), the result, scenario, CSV and
// chart files, and the embedded page's own set-up (its "open in full" link).
import * as calibration from './calibration-store.js';
import { viewFor } from './kinds.js';
import { decodeLink, encodeLink, encodeCalibrationLink } from './share.js';
import { getChartView } from './charts/registry.js';
import { download, slug, toCsv } from './export.js';
import { $ } from './dom.js';
import { state, embed, currentScenario, currentLink, describe, baseUrl } from './app-state.js';
import { postSize } from './app-results.js';

function escapeAttr(text) {
  return String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The iframe, plus the small script that sizes it to its content (embed.js). */
export function embedCode(link, title) {
  return `<iframe src="${escapeAttr(`${baseUrl()}?embed=1#${link}`)}" title="${escapeAttr(`Sightline: ${title}`)}" ` +
    'width="100%" height="560" style="border:0" loading="lazy"></iframe>\n' +
    `<script src="${escapeAttr(new URL('embed.js', baseUrl()).href)}" async></script>`;
}

export async function share(kind) {
  if (!state.base) return;
  const scenario = currentScenario();
  const link = currentLink(scenario);
  // The applied calibration travels, in a link or an embed, only when the user ticks it.
  const cal = $('share-calibration').checked ? calibration.applied() : null;
  const withCal = `${link}${cal ? `&${encodeCalibrationLink(cal)}` : ''}`;
  const text = kind === 'embed' ? embedCode(withCal, describe(scenario)) : `${baseUrl()}#${withCal}`;
  $('share-label').textContent = kind === 'embed' ? 'Embed code (paste it into an HTML page)' : 'Share link';
  const box = $('share-box');
  const area = $('share-text');
  box.hidden = false;
  box.dataset.kind = kind;
  area.value = text;
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (_) {
    area.focus();
    area.select();
    try {
      copied = document.execCommand('copy');
    } catch (__) { /* fall through */ }
  }
  $('share-status').textContent = copied
    ? `${kind === 'embed' ? 'Embed code' : 'Link'} copied to the clipboard.`
    : 'Select the text above and copy it (Ctrl+C).';
}

function resultFileStem() {
  const s = state.last && state.last.scenario;
  return `sightline-${slug(s && s.id ? s.id : state.presetId || 'scenario')}`;
}

export function exportResult() {
  if (!state.last) return;
  const envelope = { ok: true, result: state.last.result, warnings: state.last.warnings || [] };
  download(`${resultFileStem()}-result.json`, `${JSON.stringify(envelope, null, 2)}\n`, 'application/json');
}

export function exportScenario() {
  const scenario = currentScenario();
  if (!scenario) return;
  download(`${resultFileStem()}-scenario.json`, `${JSON.stringify(scenario, null, 2)}\n`, 'application/json');
}

export function exportCsv() {
  if (!state.last) return;
  const sets = viewFor(state.last.result).rows(state.last.result).filter((r) => r.rows.length);
  for (const set of sets) download(`${resultFileStem()}-${slug(set.name)}.csv`, toCsv(set.rows), 'text/csv;charset=utf-8');
}

export async function exportChart(name, format) {
  const chart = getChartView(name);
  if (!chart || !chart.hasData) return;
  const stem = `${resultFileStem()}-${slug(name)}`;
  if (format === 'svg') download(`${stem}.svg`, await chart.toSvg(), 'image/svg+xml');
  else download(`${stem}.png`, await chart.toPng());
}

export function setupEmbed() {
  if (!embed) return;
  document.body.classList.add('embed');
  if (window.ResizeObserver) new ResizeObserver(postSize).observe(document.body);
  const open = $('open-full');
  const update = () => {
    let decoded = null;
    try {
      decoded = decodeLink(location.hash);
    } catch (_) { /* the page says why; the link opens the default */ }
    open.href = decoded ? `./#${encodeLink(decoded)}` : './';
  };
  update();
  window.addEventListener('hashchange', update);
}
