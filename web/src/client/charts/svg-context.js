// The SVG drawing context of a chart's SVG export (svgcanvas, bundled under
// vendor/ by web/build.mjs), loaded by ChartView.toSvg() the first time a chart
// is exported as SVG: 14.7 KB gzip that no first result needs (web/budgets.mjs).
import { Context as SvgContext } from '../../vendor/svgcanvas.js';

// svgcanvas reads the font through a `style` attribute, which the page's CSP
// (style-src 'self') refuses; the same text drawing, reading it through the
// CSSOM instead (allowed).
const TEXT_ANCHOR = { left: 'start', right: 'end', center: 'middle', start: 'start', end: 'end' };
const BASELINE = { alphabetic: 'alphabetic', hanging: 'hanging', top: 'text-before-edge', bottom: 'text-after-edge', middle: 'central' };
SvgContext.prototype.__applyText = function applyText(text, x, y, action) {
  const probe = document.createElement('span');
  probe.style.font = this.font;
  const parent = this.__closestGroupOrSvg();
  const textElement = this.__createElement('text', {
    'font-family': probe.style.fontFamily,
    'font-size': probe.style.fontSize,
    'font-style': probe.style.fontStyle,
    'font-weight': probe.style.fontWeight,
    x,
    y,
    'text-anchor': TEXT_ANCHOR[this.textAlign] || 'start',
    'dominant-baseline': BASELINE[this.textBaseline] || 'alphabetic',
  }, true);
  textElement.appendChild(this.__document.createTextNode(text));
  this.__currentElement = textElement;
  this.__applyTransformation(textElement);
  this.__applyStyleToCurrentElement(action);
  parent.appendChild(textElement);
};

export { SvgContext };
