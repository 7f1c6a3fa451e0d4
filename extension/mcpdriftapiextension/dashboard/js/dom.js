// Building the page without HTML strings. Names, descriptions, schemas and
// messages come from MCP servers, which are untrusted: every value becomes a
// Text node or an attribute set with setAttribute, never markup. Nothing in
// this dashboard assigns innerHTML (a test checks the sources).

// h creates an element. attrs: class, dataset (object), style (object, set
// through CSSOM: the CSP refuses style attributes), on<event> (listener),
// true (boolean attribute), anything else via setAttribute.
// Children: nodes, strings (as text), arrays, and null/false (skipped).
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k === 'style') Object.assign(node.style, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  add(node, children);
  return node;
}

function add(node, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) add(node, c);
    else if (c instanceof Node) node.append(c);
    else node.append(document.createTextNode(String(c)));
  }
}

// replace empties node and appends the children.
export function replace(node, ...children) {
  node.replaceChildren();
  add(node, children);
  return node;
}

// chip is a coloured label: kind is a class (sev-breaking, st-UP, risk-high).
export function chip(label, kind, attrs) {
  return h('span', { ...attrs, class: 'chip ' + (kind || '') }, label);
}

export const severityChip = (sev, attrs) => chip(sev, 'sev-' + sev, { ...attrs, dataset: { severity: sev } });
export const statusChip = (st) => chip(st, 'st-' + st, { dataset: { status: st } });

// Severities, worst first.
export const SEVERITIES = ['breaking', 'warning', 'compatible', 'info'];

// ago renders a time as "5 min ago", with the absolute time as a tooltip.
export function ago(iso) {
  if (!iso) return h('span', { class: 'faint' }, 'never');
  const t = new Date(iso);
  return h('time', { datetime: iso, title: t.toLocaleString() }, relative(t));
}

function relative(t) {
  const s = Math.round((Date.now() - t.getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

export const count = (n) => Number(n || 0).toLocaleString('en-US');

export function millis(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 10) return ms.toFixed(2) + ' ms';
  if (ms < 1000) return ms.toFixed(1) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}

export function seconds(s) {
  return s < 120 ? s.toFixed(s < 10 ? 1 : 0) + ' s' : (s / 60).toFixed(0) + ' min';
}

export function hours(h) {
  if (h >= 1) return (Number.isInteger(h) ? h : h.toFixed(1)) + ' h';
  return Math.round(h * 60) + ' min';
}

// digest shows the first 12 hex digits, the whole digest as a tooltip.
export function digest(d) {
  if (!d) return h('span', { class: 'faint' }, '—');
  return h('code', { title: d, class: 'digest-value' }, d.slice(0, 12));
}

export const plural = (n, one, many) => count(n) + ' ' + (n === 1 ? one : many || one + 's');

// pretty is a JSON value as indented text (numbers the API kept as raw JSON
// print as the server wrote them; see api.js).
export const pretty = (v) => JSON.stringify(v, null, 2);

// fact is one labelled value of a facts grid.
export const fact = (label, ...value) => h('div', { class: 'fact' }, h('div', { class: 'k' }, label), h('div', { class: 'v' }, ...value));

// stacked labels each cell of a table with its column's heading
// (data-label), so that a narrow screen can show each row as a card of
// labelled values instead of a table wider than the screen (style.css).
export function stacked(table) {
  const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
  for (const tr of table.querySelectorAll('tbody tr')) {
    [...tr.children].forEach((td, i) => { td.dataset.label = heads[i] || ''; });
  }
  table.classList.add('stacked');
  return table;
}

// hash builds a dashboard route; segments are encoded.
export const hash = (...segments) => '#/' + segments.map(encodeURIComponent).join('/');
