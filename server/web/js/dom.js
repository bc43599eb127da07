// Small DOM and formatting helpers shared by the pages.

// h builds an element: h('button', {class: 'x', onclick: fn}, 'text', child).
// Attributes starting with "on" become listeners; null children are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// card is one titled panel of a page.
export function card(title, ...children) {
  const id = 'card-' + title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

// table builds a table with a header row; rows are arrays of cells
// (strings or nodes). empty is shown when there are no rows.
// Columns listed in hideNarrow are left out on a phone-width screen.
export function table(headers, rows, empty = 'None', hideNarrow = []) {
  const cls = (i) => (hideNarrow.includes(i) ? 'hide-narrow' : null);
  const body = rows.length
    ? rows.map((r) => h('tr', r.attrs || {}, (r.cells || r).map((c, i) => h('td', { class: cls(i), 'data-label': headers[i] }, c))))
    : [h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, empty))];
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'stack' }, h('thead', {}, h('tr', {}, headers.map((t, i) => h('th', { scope: 'col', class: cls(i) }, t)))), h('tbody', {}, body)));
}

// bar is a labelled horizontal bar for a value in [min, max].
export function bar(label, value, min = 0, max = 1, text) {
  const v = Number.isFinite(value) ? value : 0;
  const frac = Math.max(0, Math.min(1, (v - min) / (max - min || 1)));
  return h('div', { class: 'bar-row' },
    h('span', { class: 'bar-label' }, label),
    h('span', { class: 'bar', role: 'meter', 'aria-valuemin': min, 'aria-valuemax': max, 'aria-valuenow': v, 'aria-label': label },
      h('span', { class: 'bar-fill', style: `width:${(frac * 100).toFixed(1)}%` })),
    h('span', { class: 'bar-value' }, text !== undefined ? text : fmtNum(v)));
}

export function dot(ok, label) {
  return h('span', { class: ok ? 'dot ok' : 'dot off' }, (ok ? '● ' : '○ ') + label);
}

export function fmtNum(v, digits = 2) {
  if (v === null || v === undefined || !Number.isFinite(Number(v))) return '–';
  return Number(v).toFixed(digits);
}

export function fmtBytes(n) {
  if (!Number.isFinite(n) || n < 0) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${i ? n.toFixed(n < 10 ? 1 : 0) : n} ${units[i]}`;
}

export function fmtDuration(seconds) {
  let s = Math.max(0, Math.floor(seconds || 0));
  const d = Math.floor(s / 86400); s -= d * 86400;
  const hr = Math.floor(s / 3600); s -= hr * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d) return `${d}d ${hr}h ${m}m`;
  if (hr) return `${hr}h ${m}m`;
  if (m) return `${m}m ${s}s`;
  return `${s}s`;
}

export function fmtTime(iso) {
  const t = new Date(iso);
  if (isNaN(t)) return String(iso || '');
  return t.toISOString().slice(11, 23);
}

export function fmtDateTime(iso) {
  const t = new Date(iso);
  if (isNaN(t)) return String(iso || '');
  return t.toISOString().replace('T', ' ').slice(0, 19);
}

export function ago(iso, now = Date.now()) {
  const t = new Date(iso);
  if (isNaN(t)) return '–';
  return fmtDuration((now - t.getTime()) / 1000) + ' ago';
}

export function roleLabel(role, instance) {
  if (!role) return '–';
  const name = role.charAt(0).toUpperCase() + role.slice(1);
  return instance ? `${name} ${instance === 'left' ? 'L' : instance === 'right' ? 'R' : instance}` : name;
}

// fieldError shows err beside the form control whose data-field matches
// err.field, or in the form's general message slot; it returns whether a
// field took it.
export function showError(form, err) {
  clearErrors(form);
  const field = err && err.field;
  const text = err && err.message ? err.message : String(err);
  if (field) {
    const ctl = form.querySelector(`[data-field="${CSS.escape(field)}"]`);
    if (ctl) {
      const msg = h('span', { class: 'field-error', id: `err-${field.replace(/[^a-z0-9]/gi, '-')}`, role: 'alert' }, text);
      ctl.setAttribute('aria-invalid', 'true');
      ctl.setAttribute('aria-describedby', msg.id);
      (ctl.closest('label, .field') || ctl.parentElement).append(msg);
      ctl.focus();
      return true;
    }
  }
  const slot = form.querySelector('.form-error');
  if (slot) slot.textContent = field ? `${field}: ${text.replace(new RegExp('^' + field + ': '), '')}` : text;
  return false;
}

export function clearErrors(form) {
  form.querySelectorAll('.field-error').forEach((e) => e.remove());
  form.querySelectorAll('[aria-invalid]').forEach((e) => { e.removeAttribute('aria-invalid'); e.removeAttribute('aria-describedby'); });
  const slot = form.querySelector('.form-error');
  if (slot) slot.textContent = '';
}

// field is a labelled control; name is the API's dotted field name, which
// error messages use to find it.
export function field(label, control, hint) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), control, hint ? h('span', { class: 'hint' }, hint) : null);
}

const FOCUSABLE = 'a[href], button, input, select, textarea';

// keepFocus runs render, which replaces container's content, and puts the
// keyboard focus back on the same control of the same row (rows carry a
// data-node, data-route, data-subject, data-sender or data-client key), so a table
// that refreshes itself does not throw a keyboard user back to the top.
export function keepFocus(container, render) {
  const active = document.activeElement;
  let key = null;
  if (active && container.contains(active)) {
    const row = active.closest('[data-node], [data-route], [data-subject], [data-sender], [data-client]');
    if (row) {
      const attr = [...row.attributes].find((a) => ['data-node', 'data-route', 'data-subject', 'data-sender', 'data-client'].includes(a.name));
      key = { name: attr.name, value: attr.value, index: [...row.querySelectorAll(FOCUSABLE)].indexOf(active) };
    }
  }
  render();
  if (!key) return;
  const row = container.querySelector(`[${key.name}="${CSS.escape(key.value)}"]`);
  const el = row && row.querySelectorAll(FOCUSABLE)[key.index];
  if (el) el.focus();
}
