// Sightline embeds for documentation sites (a classic script, no imports, so a
// page on any origin can load it: <script src="https://HOST/sightline/embed.js" async>).
//  1. Sizes every Sightline <iframe> to its content: the embedded page posts
//     {type: 'sightline:size', height, title} and this script sets the iframe's
//     height (no inner scrollbar) and its title (what screen readers announce).
//  2. Defines <sightline-embed scenario="I1.4" charts="families,roofline">: a preset
//     id, or a share link (a full URL or its "#v1=…" part), shown as such an iframe.
// Attributes are untrusted text: they only reach the page as URL parts and the
// iframe's title, never as HTML.
(function sightlineEmbed() {
  'use strict';
  const script = document.currentScript;
  const base = new URL('./', script ? script.src : location.href);
  const origin = base.origin;

  function frameOf(source) {
    for (const frame of document.querySelectorAll('iframe')) if (frame.contentWindow === source) return frame;
    return null;
  }

  window.addEventListener('message', (e) => {
    const d = e.data;
    if (e.origin !== origin || !d || d.type !== 'sightline:size') return;
    const frame = frameOf(e.source);
    if (!frame) return;
    const height = Number(d.height);
    if (Number.isFinite(height) && height > 0 && height < 20000) frame.style.height = `${Math.ceil(height)}px`;
    if (typeof d.title === 'string' && d.title && !frame.hasAttribute('data-fixed-title')) frame.title = d.title.slice(0, 300);
  });

  /** The iframe URL for a scenario attribute: a preset id or a share link. */
  function frameUrl(scenario, charts) {
    const url = new URL(base.href);
    url.searchParams.set('embed', '1');
    if (charts) url.searchParams.set('charts', charts);
    const text = String(scenario || '').trim();
    const hashAt = text.indexOf('#');
    if (hashAt >= 0) url.hash = text.slice(hashAt);
    else if (text) url.searchParams.set('preset', text);
    return url.href;
  }

  if (!window.customElements || customElements.get('sightline-embed')) return;

  class SightlineEmbed extends HTMLElement {
    static get observedAttributes() { return ['scenario', 'link', 'charts', 'title']; }

    connectedCallback() { this.render(); }

    attributeChangedCallback() { if (this.isConnected) this.render(); }

    render() {
      const scenario = this.getAttribute('scenario') || this.getAttribute('link') || '';
      const src = frameUrl(scenario, this.getAttribute('charts') || '');
      let frame = this.querySelector('iframe');
      if (!frame) {
        frame = document.createElement('iframe');
        frame.loading = 'lazy';
        frame.style.cssText = 'display:block;width:100%;height:560px;border:0';
        this.replaceChildren(frame);
      }
      const label = this.getAttribute('title');
      if (label) frame.setAttribute('data-fixed-title', '');
      else frame.removeAttribute('data-fixed-title');
      frame.title = label || `Sightline prediction: ${scenario || 'default scenario'}`;
      if (frame.src !== src) frame.src = src;
    }
  }
  customElements.define('sightline-embed', SightlineEmbed);
}());
