// Views the first result does not need (the Sweep, Search and Calibrate tabs;
// the training and serving-simulation result views): each one's markup
// (panels/NAME.html, views/NAME.html) and code load the first time it is
// needed, so the first load carries neither (web/budgets.mjs counts them apart, and
// checks that the first result never asks for them). The markup is the site's
// own static file, never anything a user or a link wrote.

const loaded = new Map();  // file -> promise of the view's module, once its markup is in place

/**
 * Loads a view once: inserts its markup (`file`, relative to this module) into
 * the element `hostId` and resolves with `importCode()`'s module (a dynamic
 * import). A tab's are panels/NAME.html and #panel-NAME.
 */
export function loadPanel(name, importCode, { file = `panels/${name}.html`, hostId = `panel-${name}` } = {}) {
  if (!loaded.has(file)) {
    const url = new URL(`./${file}`, import.meta.url);
    const markup = fetch(url).then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${url.pathname}: HTTP ${r.status}`))));
    loaded.set(file, Promise.all([markup, importCode()]).then(([html, module]) => {
      const host = document.getElementById(hostId);
      const template = document.createElement('template');
      template.innerHTML = html;
      host.replaceChildren(template.content);
      host.dataset.loaded = 'true';
      return module;
    }));
  }
  return loaded.get(file);
}
