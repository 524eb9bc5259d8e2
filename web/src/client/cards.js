// The chart cards, generated from each view's chart list ({id, title, unit?,
// unitId?, what, tip?}) instead of copied by hand into index.html: a card's
// section there holds only what is its own (a table, a note, a tool marked
// data-card-tool); this adds the heading, the PNG / SVG export buttons and the
// chart's host element, in the same order for every card.

function exportGroup(chart) {
  const group = document.createElement('div');
  group.className = 'chart-export no-embed';
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', `Download the ${chart.what}`);
  for (const format of ['png', 'svg']) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'mini';
    b.dataset.exportChart = chart.id;
    b.dataset.format = format;
    b.setAttribute('aria-label', `Download the ${chart.what} as ${format.toUpperCase()}`);
    b.textContent = format.toUpperCase();
    group.append(b);
  }
  return group;
}

/** Fills the card of `chart` (section[data-chart=id]); false when the page has no such card. */
export function buildCard(chart) {
  const section = document.querySelector(`section[data-chart="${chart.id}"]`);
  if (!section || section.querySelector(':scope > .card-head')) return Boolean(section);
  const h3 = document.createElement('h3');
  h3.id = `chart-${chart.id}-title`;
  h3.textContent = chart.title;
  if (chart.tip) h3.title = chart.tip;
  if (chart.unit || chart.unitId) {
    const unit = document.createElement('span');
    unit.className = 'unit';
    if (chart.unitId) unit.id = chart.unitId;
    unit.textContent = chart.unit || '';
    h3.append(' ', unit);
  }
  const head = document.createElement('div');
  head.className = 'card-head';
  const tools = [...section.querySelectorAll(':scope > [data-card-tool]')];
  if (tools.length) {
    const box = document.createElement('div');
    box.className = 'card-tools';
    box.append(...tools, exportGroup(chart));
    head.append(h3, box);
  } else head.append(h3, exportGroup(chart));
  const host = document.createElement('div');
  host.id = `chart-${chart.id}`;
  host.className = 'chart-host';
  section.prepend(head, host);
  section.setAttribute('aria-labelledby', h3.id);
  return true;
}

/** Builds every view's cards; returns the ids of charts with no card on the page. */
export function buildCards(views) {
  const missing = [];
  for (const v of views) for (const chart of v.charts || []) if (!buildCard(chart)) missing.push(chart.id);
  return missing;
}
