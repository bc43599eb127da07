// Logs: the activity log with level, source, node and text filters,
// paging, auto-refresh and download.
import { h, table, fmtDateTime, fmtTime, field, showError, clearErrors } from '../dom.js';

const PAGE = 50;
const SOURCES = ['adoption', 'auth', 'firmware', 'livelink', 'rc', 'router', 'settings', 'system', 'websocket'];
const AUTO_MS = 2000;

// download fetches every log file with the token and saves it.
export async function download(api) {
  const resp = await fetch('/api/logs?download=1', { headers: api.token ? { Authorization: `Bearer ${api.token}` } : {} });
  if (!resp.ok) throw new Error(`download: ${resp.status} ${(await resp.text()).trim()}`);
  const url = URL.createObjectURL(await resp.blob());
  const a = h('a', { href: url, download: 'activity.log', hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function logsPage({ api, toast }, view) {
  const level = h('select', { id: 'log-level', 'data-field': 'level' }, [['', 'All'], ['DEBUG', 'Debug+'], ['INFO', 'Info+'], ['WARN', 'Warn+'], ['ERROR', 'Error']].map(([v, t]) => h('option', { value: v }, t)));
  const source = h('select', { id: 'log-source', 'data-field': 'source' }, h('option', { value: '' }, 'All'), SOURCES.map((s) => h('option', { value: s }, s)));
  const node = h('select', { id: 'log-node', 'data-field': 'node' }, h('option', { value: '' }, 'All'));
  const search = h('input', { id: 'log-search', type: 'search', 'data-field': 'search', placeholder: 'text in the message' });
  const auto = h('input', { id: 'log-auto', type: 'checkbox', checked: true });
  const rows = h('div', { id: 'log-table' });
  const pageInfo = h('span', { id: 'log-page' });
  const prev = h('button', { type: 'button', id: 'log-prev', onclick: () => { if (offset > 0) { offset = Math.max(0, offset - PAGE); load(); } } }, '< Prev');
  const next = h('button', { type: 'button', id: 'log-next', onclick: () => { if (offset + PAGE < total) { offset += PAGE; load(); } } }, 'Next >');
  const form = h('form', { class: 'card', id: 'log-filters', role: 'search', onsubmit: (ev) => { ev.preventDefault(); offset = 0; load(); } },
    h('h2', {}, 'Filters'),
    h('div', { class: 'row' }, field('Level', level), field('Source', source), field('Node', node), field('Search', search),
      h('button', { type: 'submit' }, 'Apply'),
      h('button', { type: 'button', onclick: () => { level.value = ''; source.value = ''; node.value = ''; search.value = ''; offset = 0; load(); } }, 'Clear')),
    h('p', { class: 'form-error', role: 'alert' }));
  let offset = 0;
  let total = 0;
  view.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'System Logs'),
      h('button', { type: 'button', id: 'log-download', onclick: () => download(api).catch((err) => toast(err.message, 'error')) }, 'Download')),
    form,
    h('section', { class: 'card', 'aria-label': 'Log events' }, rows,
      h('div', { class: 'pager' }, prev, pageInfo, next, h('label', { class: 'field inline', style: 'margin:0 0 0 auto' }, auto, 'Auto-refresh'))));
  for (const el of [level, source, node]) el.addEventListener('change', () => { offset = 0; load(); });
  let searchTimer = 0;
  search.addEventListener('input', () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => { offset = 0; load(); }, 300); });

  const known = new Set();
  function noteNode(n) {
    if (!n || known.has(n)) return;
    known.add(n);
    const opts = [...known].sort().map((v) => h('option', { value: v, selected: v === node.value }, v));
    const cur = node.value;
    node.replaceChildren(h('option', { value: '' }, 'All'), ...opts);
    node.value = cur;
  }
  function noteSource(s) {
    if (!s || [...source.options].some((o) => o.value === s)) return;
    source.append(h('option', { value: s }, s));
  }

  let inFlight = false;
  async function load() {
    if (inFlight) return;
    inFlight = true;
    clearErrors(form);
    const params = { limit: PAGE, offset };
    if (level.value) params.level = level.value;
    if (source.value) params.source = source.value;
    if (node.value) params.node = node.value;
    if (search.value) params.search = search.value;
    try {
      const r = await api.management('get_activity_log', params);
      total = r.total;
      r.events.forEach((e) => { noteNode(e.node); noteSource(e.source); });
      rows.replaceChildren(table(['Time', 'Level', 'Source', 'Node', 'Message'], r.events.map((e) => ({
        attrs: { class: `lvl-${e.level}`, 'data-seq': e.seq },
        cells: [h('time', { datetime: e.time, title: fmtDateTime(e.time) }, fmtTime(e.time)), e.level, e.source || '–', e.node || '–',
          e.attrs && Object.keys(e.attrs).length ? `${e.message} (${Object.entries(e.attrs).map(([k, v]) => `${k}=${v}`).join(' ')})` : e.message],
      })), 'No events match', [3]));
      const pages = Math.max(1, Math.ceil(total / PAGE));
      pageInfo.textContent = `Page ${Math.floor(offset / PAGE) + 1} of ${pages} · ${total} events`;
      prev.disabled = offset === 0;
      next.disabled = offset + PAGE >= total;
    } catch (err) { showError(form, err); } finally { inFlight = false; }
  }

  api.management('list_adopted').then((r) => r.nodes.forEach((n) => noteNode(n.node_id))).catch(() => {});
  load();
  const timer = setInterval(() => { if (auto.checked && offset === 0) load(); }, AUTO_MS);
  return () => { clearInterval(timer); clearTimeout(searchTimer); };
}
