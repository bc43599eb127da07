// Inputs: WebSocket clients, LiveLink subjects with live property bars,
// the LiveLink senders (refused ones with an Allow button, allowed ones
// with Revoke), and the RC receiver with live channel bars, configuration and
// calibration.
import { h, card, table, bar, dot, fmtDuration, fmtNum, field, showError, clearErrors, keepFocus } from '../dom.js';

const CLIENTS_MS = 1000;
const LIVE_MS = 250;

const LIVE_PROPERTIES = 64;

// subjectValues reads a LiveLink subject's latest property values. The
// registry lists the names; the values are the router's latest input from
// that subject, which the preview of a draft route mapping every property
// shows without saving anything.
async function subjectValues(api, name) {
  const s = await api.router('get_livelink_subject', { subject_name: name });
  const names = (s.properties || []).slice(0, LIVE_PROPERTIES);
  if (!names.length) return { subject: s, values: [] };
  const p = await api.router('preview', { route: {
    id: 'livelink_view', enabled: false, input: { source: 'livelink', subject: name }, output: { target: 'head' },
    mapping: names.map((n) => ({ from: n, to: 'pan' })) } });
  return { subject: s, values: p.mappings.map((m) => [m.from, m.input]) };
}

export function inputsPage({ api, toast }, view) {
  const summary = h('ul', { class: 'list', id: 'input-sources' });
  const clientsBox = h('div', { id: 'ws-clients' });
  const llBox = h('div', { id: 'livelink-sources' });
  const llLive = h('div', { id: 'livelink-live' });
  const llSenders = h('div', { id: 'livelink-senders' });
  const rcStatus = h('div', { id: 'rc-status' });
  const rcBars = h('div', { id: 'rc-channels', class: 'bars' });
  const rcConfig = h('div', { id: 'rc-config' });
  let selected = '';
  const timers = [];
  view.append(
    h('h1', {}, 'Inputs'),
    card('Input sources', summary),
    card('WebSocket clients', clientsBox),
    card('LiveLink sources', h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => loadLiveLink() }, 'Refresh')), llBox, llLive, llSenders),
    card('RC receiver', rcStatus, rcBars, rcConfig));

  api.command('system', 'status').then((s) => {
    summary.replaceChildren(...(s.inputs || []).map((i) => h('li', {}, dot(i.active, ''), h('strong', {}, i.source), ` ${i.enabled ? '' : 'disabled · '}${i.detail || ''}`)));
  }).catch(() => {});

  // Messages per second come from the change in each client's count.
  let prev = new Map();
  async function loadClients() {
    let r;
    try { r = await api.management('list_clients'); } catch (err) { clientsBox.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    const now = performance.now();
    const next = new Map();
    const serverNow = api.serverNow();
    clientsBox.replaceChildren(table(['Client ID', 'IP address', 'Connected', 'Messages/s', 'Dropped', 'Topics'], r.clients.map((c) => {
      next.set(c.id, { messages: c.messages, at: now });
      const p = prev.get(c.id);
      const rate = p && now > p.at ? ((c.messages - p.messages) * 1000) / (now - p.at) : null;
      return { attrs: { 'data-client': c.id }, cells: [c.client_id || `#${c.id}`, c.remote_addr, fmtDuration((serverNow - new Date(c.connected_at).getTime()) / 1000),
        rate === null ? '…' : rate.toFixed(1), String(c.dropped), (c.topics || []).join(', ') || '–'] };
    }), 'No clients', [4, 5]));
    prev = next;
  }

  async function loadLiveLink() {
    let r;
    try { r = await api.router('list_livelink_sources'); } catch (err) { llBox.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    if (!r.sources.length) {
      llBox.replaceChildren(h('p', { class: 'muted', id: 'livelink-empty' }, 'No LiveLink subjects: nothing is streaming to the LiveLink receiver.'));
      llLive.replaceChildren();
      return;
    }
    keepFocus(llBox, () => llBox.replaceChildren(table(['Subject', 'Type', 'Source IP', 'FPS', 'Properties', ''], r.sources.map((s) => ({
      attrs: { 'data-subject': s.subject_name },
      cells: [s.subject_name, s.subject_type || '–', s.source_ip || '–', fmtNum(s.frame_rate, 0),
        String(Array.isArray(s.properties) ? s.properties.length : s.property_count || '–'),
        h('button', { type: 'button', class: 'small', 'aria-pressed': String(selected === s.subject_name),
          onclick: () => { selected = selected === s.subject_name ? '' : s.subject_name; loadLiveLink(); } }, selected === s.subject_name ? 'Hide values' : 'Live values')],
    })))));
  }

  // A sender is admitted by its address: LiveLink sources cannot log in.
  function senderButton(action, address, label, done) {
    return h('button', { type: 'button', class: 'small', 'data-action': action, onclick: async () => {
      try {
        await api.call('livelink', action, { address });
        toast(`${address} ${done}`);
      } catch (err) { toast(err.message, 'error'); }
      loadSenders();
      loadLiveLink();
    } }, label);
  }

  async function loadSenders() {
    let r;
    try { r = await api.call('livelink', 'list_senders'); } catch (err) { llSenders.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    const time = (t) => new Date(t).toLocaleTimeString();
    keepFocus(llSenders, () => llSenders.replaceChildren(
      h('h3', {}, 'Refused senders'),
      h('p', { class: 'muted' }, `Frames from these addresses are dropped (${r.dropped} so far). Allow a sender only if you know the device.`),
      h('div', { id: 'livelink-unknown' }, table(['Address', 'Subjects', 'First seen', 'Last seen', 'Packets', ''], r.unknown.map((u) => ({
        attrs: { 'data-sender': u.address },
        cells: [u.address, u.subjects.join(', ') || '–', time(u.first_seen), time(u.last_seen), String(u.packets),
          senderButton('allow_sender', u.address, 'Allow', 'allowed')],
      })), 'No refused senders', [2])),
      h('h3', {}, 'Allowed senders'),
      ...(r.loopback_allowed ? [h('p', { class: 'muted', id: 'livelink-loopback' }, 'Authentication is off: senders on this machine are allowed without being listed.')] : []),
      h('div', { id: 'livelink-allowed' }, table(['Address', 'Subjects', ''], r.allowed.map((a) => ({
        attrs: { 'data-sender': a.address },
        cells: [a.address, (a.subjects || []).join(', ') || '–', senderButton('revoke_sender', a.address, 'Revoke', 'revoked')],
      })), 'No allowed senders: nothing from the network drives the robot through LiveLink'))));
  }

  async function liveSubject() {
    if (!selected) { llLive.replaceChildren(); return; }
    try {
      const { subject, values } = await subjectValues(api, selected);
      const more = (subject.properties || []).length - values.length;
      llLive.replaceChildren(h('div', {}, h('h3', {}, `${selected}: live values`), h('div', { class: 'bars', id: 'livelink-values' },
        values.map(([n, v]) => h('div', { 'data-property': n }, bar(n, v, Math.min(-1, v || 0), Math.max(1, v || 0), fmtNum(v))))),
      more > 0 ? h('p', { class: 'muted' }, `and ${more} more properties`) : null));
    } catch (err) { llLive.replaceChildren(h('p', { class: 'alert' }, err.message)); }
  }

  async function loadRC() {
    let s;
    try { s = await api.rc('get_status'); } catch (err) { rcStatus.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    rcStatus.replaceChildren(h('dl', { class: 'kv' },
      h('dt', {}, 'Status'), h('dd', { id: 'rc-connected' }, dot(s.connected, s.connected ? 'Connected' : 'Not connected'), s.enabled ? '' : ' (disabled)'),
      h('dt', {}, 'Protocol'), h('dd', {}, (s.protocol || '–').toUpperCase()),
      h('dt', {}, 'Signal'), h('dd', {}, s.connected && s.rssi ? `${s.rssi} dBm` : '–'),
      h('dt', {}, 'Failsafe'), h('dd', {}, s.failsafe ? h('span', { class: 'alert' }, 'ACTIVE') : 'Off'),
      h('dt', {}, 'Frame rate'), h('dd', {}, s.frame_rate_hz ? `${fmtNum(s.frame_rate_hz, 0)} Hz` : '–')));
    if (s.message) rcStatus.append(h('p', { class: 'muted', id: 'rc-message' }, s.message));
    rcBars.replaceChildren(...(s.channels || []).map((c) =>
      bar(`CH${c.channel}${c.name ? ' ' + c.name : ''}`, c.normalized, -1, 1, `${fmtNum(c.normalized)} (${c.raw})`)));
  }

  async function showRCConfig() {
    let proto, chans, settings;
    try {
      [proto, chans, settings] = await Promise.all([api.rc('get_protocol'), api.rc('get_channel_config'), api.management('get_settings')]);
    } catch (err) { rcConfig.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    const fs = (settings.settings.rc && settings.settings.rc.failsafe) || { action: 'hold', timeout_ms: 500 };
    const byChannel = new Map((chans.channels || []).map((c) => [c.channel, c]));
    const protocol = h('select', { 'data-field': 'protocol', id: 'rc-protocol' }, proto.supported.map((p) => h('option', { value: p, selected: p === proto.protocol }, p.toUpperCase())));
    const failsafe = h('select', { 'data-field': 'action', id: 'rc-failsafe' }, ['hold', 'neutral', 'estop', 'passthrough'].map((a) => h('option', { value: a, selected: a === fs.action }, a)));
    const timeout = h('input', { type: 'number', min: 20, max: 10000, value: fs.timeout_ms, 'data-field': 'timeout_ms', id: 'rc-timeout' });
    const recvForm = h('form', { onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(recvForm);
      try {
        await api.rc('set_protocol', { protocol: protocol.value });
        await api.rc('set_failsafe', { action: failsafe.value, timeout_ms: Number(timeout.value) });
        toast('Receiver settings saved');
      } catch (err) { showError(recvForm, err); }
    } }, h('h3', {}, 'Configure'), h('div', { class: 'row' }, field('Protocol', protocol), field('Failsafe action', failsafe), field('Signal timeout (ms)', timeout)),
    h('p', { class: 'form-error' }), h('button', { type: 'submit' }, 'Save receiver'));

    const ch = h('select', { id: 'rc-channel', 'data-field': 'channel' }, [...Array(16).keys()].map((i) => h('option', { value: i + 1 }, `CH${i + 1}${byChannel.get(i + 1) ? ' ' + byChannel.get(i + 1).name : ''}`)));
    const name = h('input', { 'data-field': 'name' });
    const min = h('input', { type: 'number', 'data-field': 'min' });
    const center = h('input', { type: 'number', 'data-field': 'center' });
    const max = h('input', { type: 'number', 'data-field': 'max' });
    const reversed = h('input', { type: 'checkbox', 'data-field': 'reversed' });
    const fill = () => {
      const c = byChannel.get(Number(ch.value)) || { name: '', min: 1000, center: 1500, max: 2000, reversed: false };
      name.value = c.name || ''; min.value = c.min; center.value = c.center; max.value = c.max; reversed.checked = !!c.reversed;
    };
    ch.addEventListener('change', fill);
    fill();
    const chForm = h('form', { id: 'rc-channel-form', onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(chForm);
      try {
        const c = await api.rc('set_channel_config', { channel: Number(ch.value), name: name.value, min: Number(min.value), center: Number(center.value), max: Number(max.value), reversed: reversed.checked });
        byChannel.set(c.channel, c);
        toast(`Channel ${c.channel} saved`);
      } catch (err) { showError(chForm, err); }
    } }, h('h3', {}, 'Channels and calibration'),
    h('div', { class: 'row' }, field('Channel', ch), field('Name', name), field('Min', min), field('Center', center), field('Max', max),
      h('label', { class: 'field inline' }, reversed, 'Reversed')),
    h('p', { class: 'form-error' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save channel'),
      ['min', 'center', 'max'].map((pos) => h('button', { type: 'button', 'data-calibrate': pos, onclick: async () => {
        clearErrors(chForm);
        try {
          const r = await api.rc('calibrate_channel', { channel: Number(ch.value), position: pos });
          byChannel.set(r.channel.channel, r.channel);
          fill();
          toast(`Channel ${ch.value} ${pos} = ${r.raw}`);
        } catch (err) { showError(chForm, err); }
      } }, `Calibrate ${pos}`))));
    rcConfig.replaceChildren(recvForm, chForm);
  }

  loadClients();
  loadLiveLink();
  loadSenders();
  loadRC();
  showRCConfig();
  timers.push(setInterval(loadClients, CLIENTS_MS), setInterval(() => { loadRC(); liveSubject(); }, LIVE_MS), setInterval(loadLiveLink, 3000), setInterval(loadSenders, 3000));
  return () => timers.forEach(clearInterval);
}
