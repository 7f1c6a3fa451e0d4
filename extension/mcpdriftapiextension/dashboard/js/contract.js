// The Contract tab: what the server serves now, from its snapshot (the
// format `mcpdrift snapshot` writes): instructions, then every tool,
// prompt, resource and resource template, each with its digest and its
// definition exactly as sent.

import { digest, fact, h, pretty, replace } from './dom.js';
import { empty } from './notice.js';

const LISTINGS = [
  ['tools', 'Tools'],
  ['prompts', 'Prompts'],
  ['resources', 'Resources'],
  ['resource_templates', 'Resource templates'],
];

// Tool annotations worth a tag when true (MCP ToolAnnotations hints).
const HINTS = [['readOnlyHint', 'read-only'], ['destructiveHint', 'destructive'], ['idempotentHint', 'idempotent'], ['openWorldHint', 'open world']];

export function contractTab(el, detail) {
  const snap = detail.snapshot;
  if (!snap) {
    replace(el, empty('No contract known yet', 'The server has not been probed successfully since the Collector started, and no baseline was restored.'));
    return null;
  }
  const info = snap.server_info || {};
  replace(el,
    h('section', { class: 'panel' },
      h('div', { class: 'section-title' }, h('h2', null, 'Overview')),
      h('div', { class: 'panel-body' },
        h('div', { class: 'facts' },
          fact('Name', info.name || '—'),
          fact('Title', info.title || '—'),
          fact('Version', info.version || '—'),
          fact('Observed', new Date(snap.observed_at).toLocaleString()),
          fact('Capabilities', (snap.capability_names || []).join(', ') || '—'),
          fact('Contract digest', digest(snap.digests && snap.digests.contract))),
        typeof snap.instructions === 'string'
          ? [h('div', { class: 'fact', style: { marginTop: '14px' } }, h('div', { class: 'k' }, 'Instructions')), h('p', { class: 'instructions' }, snap.instructions)]
          : null)),
    LISTINGS.map(([key, title]) => listing(title, snap[key] || [])));
  return null;
}

function listing(title, entries) {
  return h('section', { class: 'panel', dataset: { listing: title } },
    h('div', { class: 'section-title' }, h('h2', null, title), h('span', { class: 'count' }, String(entries.length))),
    entries.length
      ? h('ul', { class: 'def-list' }, entries.map(entry))
      : h('p', { class: 'panel-body faint' }, 'None.'));
}

function entry(e) {
  const d = e.definition && typeof e.definition === 'object' ? e.definition : {};
  const annotations = d.annotations && typeof d.annotations === 'object' ? d.annotations : {};
  const title = d.title || annotations.title;
  return h('li', { dataset: { key: e.key } }, h('details', null,
    h('summary', null,
      h('span', { class: 'def-name' }, e.key),
      typeof title === 'string' ? h('span', null, title) : null,
      HINTS.filter(([k]) => annotations[k] === true).map(([, label]) => h('span', { class: 'tag' }, label)),
      h('span', { class: 'faint' }, digest(e.digest)),
      typeof d.description === 'string' ? h('span', { class: 'def-desc' }, d.description) : null),
    h('div', { class: 'def-body' }, h('pre', null, pretty(e.definition)))));
}
