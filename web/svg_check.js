'use strict';
// svg_check.js: the gate a roofline chart from a file or the server passes
// before it joins the page, the same as the C++ one (CheckInlineSvg in
// src/report/inline_svg.cc): one <svg> of drawing elements with drawing
// attributes, no handler, no CSS (<style>, style=), nothing fetched (url()
// only of '#id', links only to '#'). The lists are the C++ ones, held equal
// by tests/web/html_sink_lint_test.py.
var opscope = window.opscope || (window.opscope = {});
(function () {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const SVG_ELEMENTS = new Set([
    'svg', 'g', 'defs', 'title', 'desc', 'text', 'tspan', 'line', 'polyline', 'polygon', 'path', 'rect',
    'circle', 'ellipse', 'marker', 'clipPath', 'linearGradient', 'radialGradient', 'stop', 'pattern',
    'symbol', 'use', 'mask']);
  // Lower-cased, as the C++ gate compares them (the HTML parser ignores case).
  const SVG_ATTRIBUTES = new Set([
    'xmlns', 'xmlns:xlink', 'version', 'id', 'class', 'width', 'height', 'x', 'y', 'x1', 'y1', 'x2', 'y2', 'cx',
    'cy', 'r', 'rx', 'ry', 'dx', 'dy', 'd', 'points', 'viewbox', 'preserveaspectratio', 'transform', 'fill',
    'fill-opacity', 'fill-rule', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'stroke-dashoffset',
    'stroke-linecap', 'stroke-linejoin', 'stroke-miterlimit', 'opacity', 'visibility', 'display', 'color',
    'font-family', 'font-size', 'font-weight', 'font-style', 'text-anchor', 'dominant-baseline',
    'alignment-baseline', 'textlength', 'lengthadjust', 'xml:space', 'shape-rendering', 'vector-effect', 'href',
    'xlink:href', 'marker-start', 'marker-mid', 'marker-end', 'markerwidth', 'markerheight', 'markerunits', 'refx',
    'refy', 'orient', 'clip-path', 'clippathunits', 'clip-rule', 'mask', 'maskunits', 'maskcontentunits', 'offset',
    'stop-color', 'stop-opacity', 'gradientunits', 'gradienttransform', 'spreadmethod', 'fx', 'fy', 'patternunits',
    'patterncontentunits', 'patterntransform', 'data-run-id', 'data-model-fingerprint']);
  // Transforms, colours and url(#id): image-set() and the like would fetch.
  const SVG_FUNCTIONS = new Set(['url', 'rotate', 'translate', 'scale', 'matrix', 'skewx', 'skewy', 'rgb', 'rgba',
    'hsl', 'hsla']);
  // A chart's ids must not shadow the page's own (#timeline, #opscope-data-trace.json).
  const SVG_ID_PREFIX = 'chart-';

  // Why a value is refused, or null; as SvgValueProblem in the C++ gate.
  function valueProblem(attr, value) {
    value = value.toLowerCase();
    if (/[<&\\]/.test(value)) return `a '<', '&' or '\\' in attribute ${attr}`;
    if (/javascript:/.test(value)) return `a javascript URL in attribute ${attr}`;
    if (attr === 'id' && !value.startsWith(SVG_ID_PREFIX)) return `id '${value}' (a chart's ids start with ${SVG_ID_PREFIX})`;
    if ((attr === 'href' || attr === 'xlink:href') && !value.startsWith('#')) return `a link out of the chart (${attr})`;
    // Every '(' opens a call; its name is what stands before it.
    for (const m of value.matchAll(/([a-z0-9-]*)[ \t\n\r]*\((?=[ \t\n\r'"]*(.?))/g)) {
      if (!SVG_FUNCTIONS.has(m[1])) return `the function '${m[1]}()' in attribute ${attr}`;
      if (m[1] === 'url' && m[2] !== '#') return `a url() out of the chart in attribute ${attr}`;
    }
    return null;
  }

  // The chart as a node of this document, or an Error naming what is refused.
  opscope.parseSvg = function (text) {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    if (doc.getElementsByTagName('parsererror').length || root.localName !== 'svg') throw new Error('not one <svg> element');
    for (const e of [root, ...root.querySelectorAll('*')]) {
      if (e.namespaceURI !== SVG_NS || !SVG_ELEMENTS.has(e.localName)) throw new Error(`<${e.localName}> is not allowed`);
      for (const a of e.attributes) {
        const name = a.name.toLowerCase();
        if (name.startsWith('on') || !SVG_ATTRIBUTES.has(name)) throw new Error(`attribute ${a.name} is not allowed`);
        const why = valueProblem(name, a.value);
        if (why) throw new Error(why);
      }
    }
    return document.importNode(root, true);
  };
})();
