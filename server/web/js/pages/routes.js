// Routes: the route table with live status, the route flow picture,
// blending, presets, and the route editor with its live preview.
import { h, card, table, dot, fmtNum, field, showError, clearErrors, keepFocus } from '../dom.js';

const SOURCES = ['rc', 'websocket', 'ros2', 'livelink', 'joystick', 'autonomous', 'safety'];

// loadTargets fetches the router's table of output targets (get_targets):
// the routable targets' names, labels and property names. The table lives
// on the server, in one place; the page only draws it.
export async function loadTargets(api) {
  const t = await api.router('get_targets');
  const routable = t.targets.filter((x) => x.routable);
  const labels = { [t.any]: 'All' };
  const properties = {};
  for (const x of routable) {
    labels[x.name] = x.label;
    properties[x.name] = x.properties.flatMap((p) => (p.count ? [...Array(p.count).keys()].map((i) => `${p.name}_${i}`) : [p.name]));
  }
  return { names: routable.map((x) => x.name), any: t.any, labels, properties };
}

const NO_TARGETS = { names: [], any: '*', labels: {}, properties: {} };
const PREVIEW_MS = 250;

function inputText(r) {
  const i = r.input || {};
  const parts = [i.source];
  if (i.subject) parts.push(i.subject);
  if (i.protocol) parts.push(i.protocol.toUpperCase());
  if (Array.isArray(r.mapping)) {
    const ch = r.mapping.map((m) => m.from).filter((f) => /^channel_\d+$/.test(f)).map((f) => f.slice(8));
    if (ch.length) parts.push(`Ch${ch.join(',')}`);
  }
  return parts.join(' ');
}

// flowDiagram draws sources → router → outputs; links of routes that
// are active now are highlighted, those of disabled routes dashed.
export function flowDiagram(routes, status, targets = NO_TARGETS) {
  const ns = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const byId = new Map((status || []).map((s) => [s.route_id, s]));
  const sources = [...new Set(routes.map((r) => r.input.source))];
  const outputs = targets.names;
  const rowH = 44;
  const height = Math.max(sources.length, outputs.length) * rowH + 30;
  const svg = el('svg', { viewBox: `0 0 600 ${height}`, class: 'flow', role: 'img', id: 'route-flow',
    'aria-label': `Route flow: ${sources.length} sources through the router to ${outputs.length} outputs` });
  const srcY = (i) => 25 + i * ((height - 30) / Math.max(sources.length, 1)) + 12;
  const outY = (i) => 25 + i * ((height - 30) / Math.max(outputs.length, 1)) + 12;
  const midY = height / 2;
  svg.append(el('text', { x: 10, y: 14 }, 'INPUTS'), el('text', { x: 255, y: 14 }, 'ROUTER'), el('text', { x: 480, y: 14 }, 'OUTPUTS'));
  const activeSrc = new Set();
  const activeOut = new Set();
  for (const r of routes) {
    const s = byId.get(r.id);
    if (!s || !s.active) continue;
    activeSrc.add(r.input.source);
    if (r.output.target === targets.any) {
      outputs.forEach((o) => activeOut.add(o));
    } else activeOut.add(r.output.target);
  }
  sources.forEach((src, i) => {
    const enabled = routes.some((r) => r.input.source === src && r.enabled);
    const cls = activeSrc.has(src) ? 'link active' : enabled ? 'link' : 'link disabled';
    svg.append(el('path', { class: cls, d: `M120 ${srcY(i)} C 180 ${srcY(i)}, 190 ${midY}, 240 ${midY}` }));
    svg.append(el('rect', { class: activeSrc.has(src) ? 'box active' : 'box', x: 10, y: srcY(i) - 14, width: 110, height: 28, rx: 4 }));
    const n = routes.filter((r) => r.input.source === src).length;
    svg.append(el('text', { x: 18, y: srcY(i) + 4 }, `${src} (${n})`));
  });
  svg.append(el('rect', { class: 'box', x: 240, y: midY - 24, width: 110, height: 48, rx: 4 }));
  svg.append(el('text', { x: 250, y: midY - 4 }, 'Priority'), el('text', { x: 250, y: midY + 12 }, 'Blending'));
  outputs.forEach((o, i) => {
    const cls = activeOut.has(o) ? 'link active' : 'link';
    svg.append(el('path', { class: cls, d: `M350 ${midY} C 400 ${midY}, 410 ${outY(i)}, 470 ${outY(i)}` }));
    svg.append(el('rect', { class: activeOut.has(o) ? 'box active' : 'box', x: 470, y: outY(i) - 14, width: 110, height: 28, rx: 4 }));
    svg.append(el('text', { x: 478, y: outY(i) + 4 }, targets.labels[o] || o));
  });
  return svg;
}

export function routesPage({ api, toast, confirm }, view) {
  const routesBox = h('div', { id: 'routes-table' });
  const flowBox = h('div', {});
  const presetsBox = h('div', { id: 'presets' });
  const blendBox = h('div', {});
  const stateEl = h('span', { id: 'router-state', class: 'muted' });
  let routes = [];
  let status = [];
  let targets = NO_TARGETS;
  view.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Routes'),
      h('div', { class: 'actions' }, stateEl, h('a', { class: 'button primary', href: '#/routes/edit/new', id: 'new-route' }, '+ New Route'))),
    card('Active routes', routesBox),
    card('Route flow visualisation', flowBox),
    h('div', { class: 'grid two' }, card('Presets', presetsBox), card('Blending', blendBox)));

  function render() {
    const byId = new Map(status.map((s) => [s.route_id, s]));
    const sorted = [...routes].sort((a, b) => (b.priority - a.priority) || a.id.localeCompare(b.id));
    keepFocus(routesBox, () => routesBox.replaceChildren(table(['Route', 'Input', 'Output', 'Priority', 'Status', 'Actions'], sorted.map((r) => {
      const s = byId.get(r.id) || {};
      const label = !r.enabled ? 'Disabled' : s.active ? 'Active' : 'Standby';
      return {
        attrs: { 'data-route': r.id },
        cells: [h('a', { href: `#/routes/edit/${encodeURIComponent(r.id)}` }, r.id), inputText(r), targets.labels[r.output.target] || r.output.target,
          String(s.priority || r.priority || '–'), h('span', { class: 'route-status' }, dot(r.enabled && s.active, label)),
          h('div', { class: 'actions' },
            h('a', { class: 'button small', href: `#/routes/edit/${encodeURIComponent(r.id)}` }, 'Edit'),
            h('button', { type: 'button', class: 'small', onclick: () => setEnabled(r, !r.enabled) }, r.enabled ? 'Disable' : 'Enable'),
            h('button', { type: 'button', class: 'small', onclick: () => del(r) }, 'Delete'))],
      };
    }), 'No routes', [1, 3])));
    flowBox.replaceChildren(flowDiagram(routes, status, targets));
  }

  async function setEnabled(r, enabled) {
    try { await api.router('set_route_enabled', { route_id: r.id, enabled }); load(); } catch (err) { toast(err.message, 'error'); }
  }

  async function del(r) {
    if (!await confirm(`Delete the route ${r.id}?`, 'Delete')) return;
    try { await api.router('delete_route', { route_id: r.id }); load(); } catch (err) { toast(err.message, 'error'); }
  }

  async function load() {
    try {
      if (targets === NO_TARGETS) targets = await loadTargets(api);
      const r = await api.router('list_routes');
      routes = r.routes;
      status = r.status || [];
      stateEl.textContent = `Router: ${r.state}${r.estop_active ? ' · E-STOP' : ''}`;
      render();
      showBlending(r.blending);
    } catch (err) { toast(err.message, 'error'); }
    loadPresets();
  }

  function showBlending(b) {
    const mode = h('select', { 'data-field': 'mode', id: 'blend-mode' }, ['priority', 'blend', 'additive'].map((m) => h('option', { value: m, selected: m === b.mode }, m)));
    const time = h('input', { type: 'number', min: 0, value: b.blend_time_ms, 'data-field': 'blend_time_ms' });
    const timeout = h('input', { type: 'number', min: 1, value: b.source_timeout_ms, 'data-field': 'source_timeout_ms' });
    const form = h('form', { onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      try {
        await api.router('set_blending', { mode: mode.value, blend_time_ms: Number(time.value), source_timeout_ms: Number(timeout.value) });
        toast('Blending saved');
      } catch (err) { showError(form, err); }
    } }, h('div', { class: 'row' }, field('Mode', mode), field('Blend time (ms)', time), field('Source timeout (ms)', timeout)),
    h('p', { class: 'form-error' }), h('button', { type: 'submit' }, 'Save blending'));
    blendBox.replaceChildren(form);
  }

  async function loadPresets() {
    let r;
    try { r = await api.router('list_presets'); } catch (err) { toast(err.message, 'error'); return; }
    const name = h('input', { id: 'preset-name', 'data-field': 'preset_name', placeholder: 'show', pattern: '[A-Za-z0-9_-]{1,64}' });
    const desc = h('input', { id: 'preset-description', 'data-field': 'description' });
    const form = h('form', { onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      try {
        await api.router('save_preset', { preset_name: name.value, description: desc.value });
        toast(`Saved preset ${name.value}`);
        loadPresets();
      } catch (err) { showError(form, err); }
    } }, h('div', { class: 'row' }, field('Preset name', name), field('Description', desc)),
    h('p', { class: 'form-error' }), h('button', { type: 'submit', id: 'save-preset' }, 'Save Current as Preset'));
    presetsBox.replaceChildren(
      h('div', { class: 'actions' }, r.presets.map((p) => h('button', {
        type: 'button', title: p.error ? p.error : `${p.description || ''} (${p.routes} routes)`, 'data-preset': p.name,
        onclick: async () => {
          if (!await confirm(`Load the preset ${p.name}? It replaces every route.`, 'Load')) return;
          try { await api.router('load_preset', { preset_name: p.name }); toast(`Loaded ${p.name}`); load(); } catch (err) { toast(err.message, 'error'); }
        },
      }, p.name))),
      h('hr', {}), form);
  }

  load();
  const off = api.subscribe('router', (s) => {
    status = s.routes || [];
    stateEl.textContent = `Router: ${s.state}${s.estop_active ? ' · E-STOP' : ''}`;
    if (routes.length) render();
  });
  return off;
}

function num(v) { return v === '' || v === null || v === undefined ? undefined : Number(v); }

export function editRoutePage({ api, toast, confirm, go }, view, routeId) {
  const isNew = routeId === 'new';
  view.append(h('div', { class: 'page-head' }, h('h1', {}, isNew ? 'New Route' : `Edit Route: ${routeId}`)));
  let timer = 0;
  let alive = true;
  (async () => {
    let route = { id: '', enabled: true, priority: 150, input: { source: 'websocket' }, output: { target: 'head' }, mapping: [{ from: 'pan', to: 'pan', scale: 1 }] };
    if (!isNew) {
      try {
        const r = await api.router('list_routes');
        const found = r.routes.find((x) => x.id === routeId);
        if (!found) { view.append(h('p', { class: 'alert' }, `No route ${routeId}. `, h('a', { href: '#/routes' }, 'Back to the routes'))); return; }
        route = found;
      } catch (err) { view.append(h('p', { class: 'alert' }, err.message)); return; }
    }
    let targets;
    try { targets = await loadTargets(api); } catch (err) { view.append(h('p', { class: 'alert' }, err.message)); return; }
    if (!alive) return;
    const ids = {
      id: h('input', { id: 'route-id', value: route.id, 'data-field': 'route.id', required: true }),
      priority: h('input', { id: 'route-priority', type: 'number', min: 0, max: 1000, value: route.priority, 'data-field': 'route.priority' }),
      enabled: h('input', { id: 'route-enabled', type: 'checkbox', checked: route.enabled, 'data-field': 'route.enabled' }),
      source: h('select', { id: 'route-source', 'data-field': 'route.input.source' }, SOURCES.map((s) => h('option', { value: s, selected: s === route.input.source }, s))),
      subject: h('input', { id: 'route-subject', value: route.input.subject || '', 'data-field': 'route.input.subject' }),
      type: h('select', { id: 'route-type', 'data-field': 'route.input.type' }, ['', 'animation', 'transform', 'face', 'camera'].map((s) => h('option', { value: s, selected: s === (route.input.type || '') }, s || 'any'))),
      protocol: h('select', { id: 'route-protocol', 'data-field': 'route.input.protocol' }, ['', 'pwm', 'ppm', 'sbus', 'ibus', 'crsf'].map((s) => h('option', { value: s, selected: s === (route.input.protocol || '') }, s || 'any'))),
      target: h('select', { id: 'route-target', 'data-field': 'route.output.target' }, [...targets.names, targets.any].map((t) => h('option', { value: t, selected: t === route.output.target }, `${targets.labels[t]} (${t})`))),
      passthrough: h('input', { id: 'route-passthrough', type: 'checkbox', checked: route.mapping === 'passthrough', 'data-field': 'route.mapping' }),
      commands: h('input', { id: 'route-commands', value: (route.input.command_types || []).join(', '), 'data-field': 'route.input.command_types', placeholder: 'move, home, drive (empty = all)' }),
    };
    const rows = h('tbody', { id: 'mapping-rows' });
    const datalistFrom = h('datalist', { id: 'from-names' }, [...Array(16).keys()].map((i) => h('option', { value: `channel_${i + 1}` })),
      ['pan', 'tilt', 'roll', 'jaw', 'linear', 'angular', 'headYaw', 'headPitch', 'headRoll', 'jawOpen', 'yaw', 'pitch', 'x', 'y', 'z'].map((v) => h('option', { value: v })));
    const datalistTo = h('datalist', { id: 'to-names' });
    const fillTo = () => datalistTo.replaceChildren(...(targets.properties[ids.target.value] || [...new Set(Object.values(targets.properties).flat())]).map((v) => h('option', { value: v })));
    fillTo();
    ids.target.addEventListener('change', fillTo);

    function mappingRow(m) {
      const inp = (key, value, attrs = {}) => h('input', { value: value === undefined || value === null ? '' : value, 'aria-label': key, 'data-key': key, ...attrs });
      const curve = h('select', { 'aria-label': 'curve', 'data-key': 'curve' }, ['linear', 'exponential'].map((c) => h('option', { value: c, selected: (m.curve || 'linear') === c }, c)));
      const mode = h('select', { 'aria-label': 'mode', 'data-key': 'mode' }, ['analog', 'switch'].map((c) => h('option', { value: c, selected: (m.mode || 'analog') === c }, c)));
      const inverted = h('input', { type: 'checkbox', 'aria-label': 'inverted', 'data-key': 'inverted', checked: !!m.inverted });
      const tr = h('tr', { class: 'mapping' },
        h('td', {}, inp('from', m.from, { list: 'from-names', class: 'wide' })),
        h('td', {}, inp('to', m.to, { list: 'to-names' })),
        h('td', {}, inp('scale', m.scale === undefined ? 1 : m.scale, { type: 'number', step: 'any' })),
        h('td', {}, inp('offset', m.offset || 0, { type: 'number', step: 'any' })),
        h('td', {}, inp('deadzone', m.deadzone || 0, { type: 'number', step: 'any', min: 0 })),
        h('td', {}, curve, inp('expo', m.expo || '', { type: 'number', step: 'any', min: 0, max: 1, placeholder: 'expo' })),
        h('td', {}, inp('clamp_min', m.clamp ? m.clamp[0] : '', { type: 'number', step: 'any', placeholder: 'min' }), inp('clamp_max', m.clamp ? m.clamp[1] : '', { type: 'number', step: 'any', placeholder: 'max' })),
        h('td', {}, mode, inp('threshold', m.threshold === undefined ? '' : m.threshold, { type: 'number', step: 'any', placeholder: '0.5' })),
        h('td', {}, inverted),
        h('td', {}, h('button', { type: 'button', class: 'small', 'aria-label': 'Remove mapping', onclick: () => { tr.remove(); } }, '×')));
      return tr;
    }
    if (Array.isArray(route.mapping)) route.mapping.forEach((m) => rows.append(mappingRow(m)));

    function draft() {
      const input = { source: ids.source.value };
      if (ids.subject.value) input.subject = ids.subject.value;
      if (ids.type.value) input.type = ids.type.value;
      if (ids.protocol.value) input.protocol = ids.protocol.value;
      const r = { id: ids.id.value.trim(), enabled: ids.enabled.checked, priority: Number(ids.priority.value) || 0, input, output: { target: ids.target.value } };
      if (ids.passthrough.checked) {
        r.mapping = 'passthrough';
        const c = ids.commands.value.split(',').map((s) => s.trim()).filter(Boolean);
        if (c.length) input.command_types = c;
      } else {
        r.mapping = [...rows.children].map((tr, idx) => {
          // Errors name route.mapping[idx].KEY; the clamp pair shares one name.
          tr.querySelectorAll('[data-key]').forEach((e) => {
            const k = e.dataset.key.startsWith('clamp') ? 'clamp' : e.dataset.key;
            if (e.dataset.key !== 'clamp_max') e.setAttribute('data-field', `route.mapping[${idx}].${k}`);
          });
          const v = (k) => tr.querySelector(`[data-key=${k}]`);
          const m = { from: v('from').value.trim(), to: v('to').value.trim() };
          const set = (k, x) => { if (x !== undefined && !Number.isNaN(x)) m[k] = x; };
          set('scale', num(v('scale').value));
          if (num(v('offset').value)) m.offset = num(v('offset').value);
          if (num(v('deadzone').value)) m.deadzone = num(v('deadzone').value);
          if (v('curve').value !== 'linear') m.curve = v('curve').value;
          if (num(v('expo').value)) m.expo = num(v('expo').value);
          const lo = num(v('clamp_min').value);
          const hi = num(v('clamp_max').value);
          if (lo !== undefined || hi !== undefined) m.clamp = [lo === undefined ? -1e9 : lo, hi === undefined ? 1e9 : hi];
          if (v('mode').value === 'switch') { m.mode = 'switch'; set('threshold', num(v('threshold').value)); }
          if (v('inverted').checked) m.inverted = true;
          return m;
        });
      }
      return r;
    }

    const mappingBox = h('div', { id: 'mappings', class: 'table-wrap' }, datalistFrom, datalistTo,
      h('table', { class: 'mappings' },
        h('thead', {}, h('tr', {}, ['From', 'To', 'Scale', 'Offset', 'Deadzone', 'Curve', 'Clamp', 'Mode', 'Inv.', ''].map((t) => h('th', { scope: 'col' }, t)))),
        rows),
      h('div', { class: 'actions' }, h('button', { type: 'button', id: 'add-mapping', onclick: () => rows.append(mappingRow({ from: '', to: '', scale: 1 })) }, '+ Add Mapping')));
    const syncPass = () => { mappingBox.hidden = ids.passthrough.checked; ids.commands.closest('.field').hidden = !ids.passthrough.checked; };
    ids.passthrough.addEventListener('change', syncPass);

    const previewBody = h('tbody', {});
    const previewInfo = h('p', { id: 'preview-info', class: 'muted' });
    const preview = h('div', { id: 'preview', 'aria-live': 'off' }, previewInfo,
      h('div', { class: 'table-wrap' }, h('table', { class: 'preview' },
        h('thead', {}, h('tr', {}, ['Input', 'Value', '', 'Output', 'Value', 'Unit'].map((t) => h('th', { scope: 'col' }, t)))), previewBody)));

    const form = h('form', { id: 'route-form', novalidate: true, onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      const r = draft();
      try {
        await api.router('set_route', { route: r });
        if (!isNew && r.id !== routeId) await api.router('delete_route', { route_id: routeId });
        toast(`Saved route ${r.id}`);
        go('/routes');
      } catch (err) { showError(form, err); }
    } },
    card('Basic settings', h('div', { class: 'row' }, field('Name', ids.id), field('Priority (higher overrides lower; 0 = source default)', ids.priority),
      h('label', { class: 'field inline' }, ids.enabled, 'Enabled'))),
    h('div', { class: 'grid two' },
      card('Input source', field('Source', ids.source), h('div', { class: 'row' }, field('Subject (LiveLink)', ids.subject), field('Type', ids.type), field('Protocol (RC)', ids.protocol))),
      card('Output target', field('Target', ids.target), h('label', { class: 'field inline' }, ids.passthrough, 'Passthrough (commands go straight through)'), field('Command types', ids.commands))),
    card('Channel mappings', mappingBox),
    card('Live preview', preview),
    h('p', { class: 'form-error', role: 'alert' }),
    h('div', { class: 'actions' },
      h('a', { class: 'button', href: '#/routes' }, 'Cancel'),
      isNew ? null : h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!await confirm(`Delete the route ${routeId}?`, 'Delete')) return;
        try { await api.router('delete_route', { route_id: routeId }); go('/routes'); } catch (err) { toast(err.message, 'error'); }
      } }, 'Delete'),
      h('button', { type: 'submit', class: 'primary', id: 'save-route' }, 'Save')));
    view.append(form);
    syncPass();

    let inFlight = false;
    async function refreshPreview() {
      if (inFlight || !alive) return;
      inFlight = true;
      const r = draft();
      if (!r.id) r.id = 'draft';
      try {
        const p = await api.router('preview', { route: r });
        previewInfo.textContent = p.has_input
          ? `Input ${p.active ? 'active' : 'seen'} ${fmtNum(p.input_age_ms, 0)} ms ago · driving ${p.target}: ${p.driving.join(', ') || 'nothing'}`
          : `No ${p.source} input seen yet`;
        previewInfo.classList.remove('alert');
        // Units and limits come from the router's table of targets.
        const lines = p.mappings.length ? p.mappings.map((m) => h('tr', { class: m.out_of_range ? 'preview-row warn' : 'preview-row', title: m.out_of_range ? `beyond the limits of ${m.to}` : null },
          h('td', {}, m.from), h('td', { class: 'preview-in' }, fmtNum(m.input, 3)), h('td', {}, '→'),
          h('td', {}, m.to), h('td', { class: 'preview-out' }, fmtNum(m.output, 3)), h('td', { class: 'preview-unit' }, m.unit || '')))
          : Object.entries(p.values).map(([k, v]) => h('tr', { class: 'preview-row' }, h('td', {}, 'command'), h('td', {}, ''), h('td', {}, '→'), h('td', {}, k), h('td', { class: 'preview-out' }, fmtNum(v, 3))));
        previewBody.replaceChildren(...lines);
      } catch (err) {
        previewInfo.textContent = err.message;
        previewInfo.classList.add('alert');
      } finally { inFlight = false; }
    }
    refreshPreview();
    timer = setInterval(refreshPreview, PREVIEW_MS);
  })();
  return () => { alive = false; clearInterval(timer); };
}
