// Nodes: the adopted and unadopted tables, a node's details and the
// adoption page with its GPIO header diagram.
import { h, card, table, bar, dot, ago, fmtDuration, fmtNum, roleLabel, field, showError, clearErrors, keepFocus } from '../dom.js';
import { logLine } from './dashboard.js';

const REFRESH_MS = 2000;

// The Raspberry Pi 40-pin header, by physical pin number.
const HEADER = [null,
  '3V3', '5V', 'GPIO2', '5V', 'GPIO3', 'GND', 'GPIO4', 'GPIO14', 'GND', 'GPIO15',
  'GPIO17', 'GPIO18', 'GPIO27', 'GND', 'GPIO22', 'GPIO23', '3V3', 'GPIO24', 'GPIO10', 'GND',
  'GPIO9', 'GPIO25', 'GPIO11', 'GPIO8', 'GND', 'GPIO7', 'GPIO0', 'GPIO1', 'GPIO5', 'GND',
  'GPIO6', 'GPIO12', 'GPIO13', 'GND', 'GPIO19', 'GPIO16', 'GPIO26', 'GPIO20', 'GND', 'GPIO21'];

const USE_LETTER = { i2c: 'I', pwm: 'P', spi: 'S', uart: 'U', input: 'i', output: 'O' };

// ROLES are the roles the adopt page offers when the server runs without a
// robot type (list_roles says any_role), and the labels of those a robot
// type declares.
const ROLES = [
  { value: 'head', instance: '', label: 'Head', text: 'Pan/tilt/roll articulation, camera' },
  { value: 'arms', instance: 'left', label: 'Arms Left', text: 'Left arm joint control, gripper' },
  { value: 'arms', instance: 'right', label: 'Arms Right', text: 'Right arm joint control, gripper' },
  { value: 'tracks', instance: '', label: 'Tracks', text: 'Differential drive, odometry' },
  { value: 'console', instance: '', label: 'Console', text: 'Display, user input' },
  { value: 'balance', instance: '', label: 'Balance', text: 'Self-balancing base' },
  // A humanoid's limbs (robot_config pi_plus-S-12L8A0G2H0W): CAN actuators
  // driven through the motor middleware.
  { value: 'limb', instance: 'leg_left', label: 'Leg Left', text: 'Humanoid limb: six CAN actuators' },
  { value: 'limb', instance: 'leg_right', label: 'Leg Right', text: 'Humanoid limb: six CAN actuators' },
  { value: 'limb', instance: 'arm_left', label: 'Arm Left (limb)', text: 'Humanoid limb: four CAN actuators' },
  { value: 'limb', instance: 'arm_right', label: 'Arm Right (limb)', text: 'Humanoid limb: four CAN actuators' },
  { value: 'limb', instance: 'neck', label: 'Neck', text: 'Humanoid limb: two CAN actuators' },
];

// roleChoices are the roles to offer, from list_roles: every one of ROLES
// without a robot type, else those the robot type declares, labelled from
// ROLES where it has them.
function roleChoices(declared) {
  if (declared.any_role) return { robotType: '', roles: ROLES };
  const roles = declared.roles.map((d) => ROLES.find((r) => r.value === d.role && r.instance === (d.instance || '')) ||
    { value: d.role, instance: d.instance || '', label: roleLabel(d.role, d.instance), text: d.key });
  return { robotType: declared.robot_type, roles };
}

// declaredNote says why only some roles are offered.
function declaredNote(robotType) {
  if (!robotType) return null;
  return h('p', { class: 'muted', id: 'adopt-robot-type' }, `The roles robot type ${robotType} declares.`);
}

// gpioHeader draws the 40-pin header with each pin's detected use.
export function gpioHeader(pins) {
  const byNumber = new Map((pins || []).map((p) => [p.pin_number, p]));
  const cells = [];
  for (let row = 0; row < 20; row++) {
    for (const n of [row * 2 + 1, row * 2 + 2]) {
      const name = HEADER[n];
      const p = byNumber.get(n);
      const used = p && p.in_use;
      const letter = used ? (USE_LETTER[p.direction] || '•') : '';
      const kind = name === 'GND' ? 'ground' : /V$/.test(name) ? 'power' : used ? 'used' : '';
      // Every GPIO's direction and level (free pins too: what a wire on it
      // reads now), and who uses it.
      const state = p && p.current_state && p.current_state !== 'unknown' ? `, ${p.current_state}` : '';
      const title = `Pin ${n} ${name}${p ? `: ${p.direction}${state}${used && p.used_by ? ' → ' + p.used_by : ''}` : ''}`;
      const level = p && p.current_state === 'high' ? ' high' : '';
      const attrs = { class: `pin ${kind}${level}`, title, 'aria-label': title, 'data-pin': n };
      if (p) attrs['data-state'] = p.current_state;
      const pin = h('span', attrs, letter);
      const label = h('span', { class: n % 2 ? 'name-l' : 'name-r' }, name);
      if (n % 2) cells.push(label, pin); else cells.push(pin, label);
    }
  }
  return h('div', {},
    h('div', { class: 'pins', role: 'img', 'aria-label': `GPIO header, ${(pins || []).filter((p) => p.in_use).length} pins in use` }, cells),
    h('p', { class: 'legend' }, '[I] I2C  [P] PWM  [S] SPI  [U] UART  [O] output  [i] input; a bar under a pin: it reads high (hover for each pin\'s state)'));
}

function peripheralsList(list) {
  const found = (list || []).filter((p) => p.responsive);
  if (!found.length) return h('p', { class: 'muted' }, 'None detected');
  return h('ul', {}, found.map((p) => h('li', {}, `${p.type.toUpperCase()}: ${p.address}${p.description ? ' (' + p.description + ')' : ''}`)));
}

export function nodesPage({ api, toast, confirm, go }, view) {
  const adopted = h('div', { id: 'adopted' });
  const unadopted = h('div', { id: 'unadopted' });
  view.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Nodes'),
      h('button', { type: 'button', id: 'scan', onclick: () => refresh() }, '+ Scan for Nodes')),
    card('Adopted nodes', adopted),
    card('Unadopted nodes', unadopted));

  async function reset(n) {
    if (!await confirm(`Reset ${n.display_name || n.node_id}? It stops its role and returns to the unadopted list.`, 'Reset')) return;
    try {
      const r = await api.management('reset_node', { node_id: n.node_id, factory_reset: false });
      toast(r.message || 'Reset');
      refresh();
    } catch (err) { toast(err.message, 'error'); }
  }

  async function refresh() {
    let a, u;
    try {
      [a, u] = await Promise.all([api.management('list_adopted'), api.management('list_unadopted')]);
    } catch (err) { toast(err.message, 'error'); return; }
    keepFocus(adopted, () => adopted.replaceChildren(table(['Node', 'Role', 'Name', 'Status', 'IP', 'Actions'], a.nodes.map((n) => ({
      attrs: { 'data-node': n.node_id },
      cells: [n.node_id, roleLabel(n.role, n.instance), n.display_name || '–',
        h('span', {}, dot(n.online, n.online ? 'Online' : 'Offline'), n.last_status && n.last_status.state !== 'ACTIVE' ? ` (${n.last_status.state})` : ''),
        (n.last_status && n.last_status.address) || '–',
        h('div', { class: 'actions' },
          h('a', { class: 'button small', href: `#/nodes/${encodeURIComponent(n.node_id)}` }, 'View'),
          h('button', { type: 'button', class: 'small', onclick: () => reset(n) }, 'Reset'))],
    })), 'No adopted nodes', [4])));
    keepFocus(unadopted, () => unadopted.replaceChildren(table(['Node', 'Hardware', 'Firmware', 'Detected', 'Actions'], u.nodes.map((n) => ({
      attrs: { 'data-node': n.node_id },
      cells: [n.node_id, n.hardware_rev || '–', n.firmware_version || '–', ago(n.first_seen, api.serverNow()),
        h('a', { class: 'button small primary', href: `#/nodes/adopt/${encodeURIComponent(n.node_id)}` }, 'Adopt')],
    })), 'No unadopted nodes', [1, 2])));
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}

// roleState shows the live state of the node's role from its topic.
function roleStateView(api, info) {
  const box = h('dl', { class: 'kv', id: 'role-state' }, h('dt', {}, 'State'), h('dd', {}, info.state || '–'));
  const topic = { head: 'head', arms: 'arms', tracks: 'tracks', balance: 'balance' }[info.role];
  if (!topic) return { box, off: () => {} };
  let last = 0;
  const off = api.subscribe(topic, (d) => {
    if (topic === 'arms' && d.arm !== info.instance) return;
    last = Date.now();
    const rows = [['State', info.state]];
    if (topic === 'head') {
      rows.push(['Pan', `${fmtNum(d.pan, 1)}°`], ['Tilt', `${fmtNum(d.tilt, 1)}°`], ['Roll', `${fmtNum(d.roll, 1)}°`],
        ['Jaw', fmtNum(d.jaw)], ['Camera', d.camera_active ? 'Active' : 'Off']);
    } else if (topic === 'balance') {
      rows.push(['Balance', d.state], ['Source', d.source], ['Pitch', `${fmtNum(d.pitch_deg, 1)}°`],
        ['Speed', `${fmtNum(d.speed_mps)} m/s (target ${fmtNum(d.target_speed_mps)})`],
        ['Speed limit', `${d.speed_limit_pct} %`], ['Faults', (d.faults || []).join(', ') || 'none'],
        ['Battery', `${fmtNum(d.battery_v, 1)} V`]);
    } else if (topic === 'tracks') {
      rows.push(['E-Stop', d.estop_active ? 'ACTIVE: motors stopped' : 'released'],
        ['Motors', d.motors_enabled ? 'enabled' : 'disabled'],
        ['Left', `${fmtNum(d.left_velocity)} m/s · ${fmtNum(d.left_current)} A`],
        ['Right', `${fmtNum(d.right_velocity)} m/s · ${fmtNum(d.right_current)} A`]);
    } else {
      for (const [k, v] of Object.entries(d)) {
        if (k === 'arm') continue;
        rows.push([k, Array.isArray(v) ? v.map((x) => fmtNum(x, 1)).join(', ') : typeof v === 'number' ? fmtNum(v) : String(v)]);
      }
    }
    rows.push(['Last state', `${((Date.now() - last) / 1000).toFixed(1)} s ago`]);
    box.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-key': k }, v)]));
  });
  return { box, off };
}

// drivePad drives a base (target "tracks" or "balance") from the page: a
// direction button held (pointer, or Space/Enter) resends "drive" every
// 100 ms, as the router's routes expect of a live source; letting go sends
// "stop". The balancing base also gets Arm and Disarm, which the base itself
// may refuse (the reason is shown).
function drivePad(api, toast, target) {
  const speed = h('input', { type: 'number', id: 'drive-speed', value: '0.3', min: '0', max: '2', step: '0.1', 'data-field': 'linear' });
  const status = h('p', { class: 'muted', id: 'drive-status', role: 'status' }, 'Stopped');
  let timer = null;
  const stop = () => {
    if (!timer) return;
    clearInterval(timer);
    timer = null;
    status.textContent = 'Stopped';
    api.command(target, 'stop', {}).catch((err) => toast(err.message, 'error'));
  };
  const start = (label, dl, da) => {
    stop();
    const v = Math.max(0, Number(speed.value) || 0);
    const send = () => api.command(target, 'drive', { linear: dl * v, angular: da * 2 * v }).catch((err) => {
      stop();
      toast(err.message, 'error');
    });
    status.textContent = `Driving: ${label}`;
    send();
    timer = setInterval(send, 100);
  };
  const button = (id, label, dl, da) => h('button', {
    type: 'button', id, 'aria-label': `Drive ${label} while held`,
    onpointerdown: (e) => { e.preventDefault(); start(label, dl, da); },
    onpointerup: stop, onpointerleave: stop, onpointercancel: stop, onblur: stop,
    onkeydown: (e) => { if ((e.key === ' ' || e.key === 'Enter') && !timer) { e.preventDefault(); start(label, dl, da); } },
    onkeyup: (e) => { if (e.key === ' ' || e.key === 'Enter') stop(); },
  }, label);
  const pad = h('div', { class: 'actions', id: 'drive-pad' },
    button('drive-forward', 'Forward', 1, 0), button('drive-back', 'Back', -1, 0),
    button('drive-left', 'Left', 0, 1), button('drive-right', 'Right', 0, -1),
    h('button', { type: 'button', id: 'drive-stop', onclick: stop }, 'Stop'));
  const arming = target !== 'balance' ? null : h('div', { class: 'actions' },
    h('button', { type: 'button', id: 'balance-arm', class: 'primary', onclick: async () => {
      try { toast((await api.command('balance', 'arm', {})).message); } catch (err) { toast(err.message, 'error'); }
    } }, 'Arm'),
    h('button', { type: 'button', id: 'balance-disarm', onclick: async () => {
      try { toast((await api.command('balance', 'disarm', {})).message); } catch (err) { toast(err.message, 'error'); }
    } }, 'Disarm'));
  const box = h('div', { id: 'drive' }, arming, field('Speed (m/s)', speed), pad, status);
  return { box, off: stop };
}

// cameraView shows the head camera's frames from the "camera" topic (JPEGs
// the server encodes from the head's stream) and turns the stream on and
// off with the head camera command. The server counts the camera's
// holders: "Stop camera" drops this page's claim, and the camera stays on
// while someone else (Foxglove, another browser) holds it. Leaving the
// page drops the claim too.
function cameraView(api, toast) {
  const img = h('img', { id: 'camera-view', alt: 'Head camera', width: '640', height: '480' });
  const info = h('p', { class: 'muted', id: 'camera-info' }, 'Camera off');
  let on = false;
  const toggle = h('button', { type: 'button', id: 'camera-toggle', onclick: async () => {
    try {
      const r = await api.command('head', 'camera', { enable: !on });
      on = !on;
      toggle.textContent = on ? 'Stop camera' : 'Start camera';
      if (!on) {
        const others = (r && r.holders) || [];
        info.textContent = others.length ? `Camera stays on for ${others.join(', ')}` : 'Camera off';
      }
    } catch (err) { toast(err.message, 'error'); }
  } }, 'Start camera');
  const unsubscribe = api.subscribe('camera', (d) => {
    if (d.camera !== 'head') return;
    img.src = `data:image/jpeg;base64,${d.jpeg}`;
    img.width = d.width;
    img.height = d.height;
    info.textContent = `${d.width}×${d.height}, frame ${d.seq}`;
  });
  const off = () => {
    unsubscribe();
    if (on) api.command('head', 'camera', { enable: false }).catch(() => {});
  };
  return { box: h('div', { id: 'camera' }, h('div', { class: 'actions' }, toggle), img, info), off };
}

export function nodeDetailPage({ api, toast, confirm, go }, view, id) {
  const head = h('div', { class: 'page-head' }, h('h1', {}, `Node: ${id}`));
  view.append(head);
  const offs = [];
  (async () => {
    let info;
    try { info = await api.management('get_node_info', { node_id: id }); } catch (err) {
      view.append(h('p', { class: 'alert' }, err.message));
      return;
    }
    if (!info.adopted) { go(`/nodes/adopt/${encodeURIComponent(id)}`); return; }
    const st = info.status || {};
    head.querySelector('h1').textContent = `Node: ${id} (${roleLabel(info.role, info.instance)})`;
    const nameInput = h('input', { value: info.display_name || '', 'data-field': 'display_name', id: 'display-name' });
    const renameForm = h('form', { class: 'row', onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(renameForm);
      try {
        await api.management('set_node_name', { node_id: id, display_name: nameInput.value });
        toast('Name saved');
      } catch (err) { showError(renameForm, err); }
    } }, field('Display name', nameInput), h('button', { type: 'submit' }, 'Rename'), h('p', { class: 'form-error' }));
    head.append(h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: async () => {
        try { toast((await api.command('system', 'reboot', { node: id })).message); } catch (err) { toast(err.message, 'error'); }
      } }, 'Reboot'),
      h('button', { type: 'button', onclick: async () => {
        if (!await confirm(`Reset ${id} to unadopted?`, 'Reset')) return;
        try { toast((await api.management('reset_node', { node_id: id, factory_reset: false })).message); go('/nodes'); } catch (err) { toast(err.message, 'error'); }
      } }, 'Reset'),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!await confirm(`Factory reset ${id}? It forgets its role and downloads its firmware again.`, 'Factory reset')) return;
        try { toast((await api.management('reset_node', { node_id: id, factory_reset: true })).message); go('/nodes'); } catch (err) { toast(err.message, 'error'); }
      } }, 'Unadopt')));
    const hw = h('dl', { class: 'kv' }, [
      ['Model', st.model], ['Hardware', st.hardware_rev], ['MAC', st.mac_address], ['Address', st.address],
      ['Firmware', st.firmware_version], ['Config', st.config_version], ['Topic prefix', info.topic_prefix],
      ['Adopted', info.adopted_at ? new Date(info.adopted_at).toISOString().slice(0, 19).replace('T', ' ') : ''],
    ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v || '–')]));
    const metrics = h('div', { id: 'metrics' });
    const showMetrics = (s) => metrics.replaceChildren(
      bar('CPU', s.cpu_usage, 0, 100, `${Math.round(s.cpu_usage || 0)}%`),
      bar('Memory', s.memory_usage, 0, 100, `${Math.round(s.memory_usage || 0)}%`),
      bar('Temp', s.cpu_temp, 0, 90, `${fmtNum(s.cpu_temp, 1)} °C`),
      h('p', {}, `Uptime: ${fmtDuration(s.uptime_seconds)} · `, dot(info.online, info.online ? 'Online' : 'Offline'), s.message ? ` · ${s.message}` : ''));
    showMetrics(st);
    const gpioBox = h('div', { id: 'gpio-status' });
    const showGPIO = (g) => {
      const used = (g && g.pins || []).filter((p) => p.in_use);
      gpioBox.replaceChildren(h('div', {}, used.length
        ? h('ul', { class: 'list' }, used.map((p) => h('li', {}, `${p.pin_name} (${p.direction.toUpperCase()}) → ${p.used_by || 'in use'}`)))
        : h('p', { class: 'muted' }, 'No header pins in use'), g ? peripheralsList(g.peripherals) : null));
    };
    showGPIO(info.gpio_status);
    // A fresh probe shows the pins the role has claimed since.
    api.management('get_gpio_status', { node_id: id }).then(showGPIO).catch(() => {});
    const role = roleStateView(api, info);
    offs.push(role.off);
    let cam = null;
    if (info.role === 'head') {
      cam = cameraView(api, toast);
      offs.push(cam.off);
    }
    let drive = null;
    if (info.role === 'tracks' || info.role === 'balance') {
      drive = drivePad(api, toast, info.role);
      offs.push(drive.off);
    }
    const activity = h('ol', { class: 'log', id: 'node-activity' });
    // The node's active alerts: its warnings and errors of the last minute.
    const alertsBox = h('ul', { class: 'list', id: 'node-alerts' }, h('li', { class: 'muted' }, 'No active alerts'));
    const loadAlerts = () => api.management('get_node_alerts', { node_id: id }).then((r) => {
      alertsBox.replaceChildren(...(r.alerts.length ? r.alerts.map((a) => h('li', { class: `lvl-${a.level === 'error' ? 'ERROR' : 'WARN'}`, 'data-source': a.source },
        h('strong', {}, a.level.toUpperCase()), ` [${a.source}] ${a.message}`,
        h('span', { class: 'muted' }, ` ×${a.count}, last ${ago(a.last * 1000, api.serverNow())}`))) : [h('li', { class: 'muted' }, 'No active alerts')]));
    }).catch(() => {});
    loadAlerts();
    const alertTimer = setInterval(loadAlerts, 2000);
    offs.push(() => clearInterval(alertTimer));
    view.append(
      card('Display name', renameForm),
      h('div', { class: 'grid two' }, card('Hardware info', hw), card('Current state', role.box)),
      drive ? card('Drive', drive.box) : '',
      cam ? card('Camera', cam.box) : '',
      h('div', { class: 'grid two' }, card('System metrics', metrics),
        card('GPIO status', gpioBox)),
      card('Alerts', alertsBox),
      card('Recent activity', activity));
    offs.push(api.subscribe('nodes', (s) => { if (s.node_id === id) { info.state = s.state; showMetrics(s); } }));
    offs.push(api.subscribe('logs', (e) => {
      if (e.node !== id) return;
      activity.prepend(logLine(e));
      while (activity.children.length > 30) activity.lastChild.remove();
    }));
    try {
      const r = await api.management('get_activity_log', { node: id, limit: 30 });
      activity.replaceChildren(...r.events.map(logLine));
      if (!r.events.length) activity.append(h('li', { class: 'muted' }, 'No activity yet'));
    } catch (err) { toast(err.message, 'error'); }
  })();
  return () => offs.forEach((off) => off());
}

// sameKey reports whether what the operator typed is key's: its
// fingerprint as the node prints it at boot (natsbus.KeyFingerprint, the
// first 16 characters after the 'U' in groups of four), or more of it, or
// the whole key; spaces and case aside.
function sameKey(typed, key) {
  const t = String(typed || '').replace(/[\s-]/g, '').toUpperCase().replace(/^U(?=.{55}$)/, '');
  const k = String(key || '').replace(/^U/, '');
  return t.length >= 16 && k.startsWith(t);
}

export function adoptPage({ api, toast, confirm, go }, view, id) {
  view.append(h('div', { class: 'page-head' }, h('h1', {}, `Adopt Node: ${id}`),
    h('a', { class: 'button', href: '#/nodes' }, 'Cancel')));
  let alive = true;
  (async () => {
    let node;
    let choices;
    try {
      const [u, declared] = await Promise.all([api.management('list_unadopted'), api.management('list_roles')]);
      node = u.nodes.find((n) => n.node_id === id);
      choices = roleChoices(declared);
    } catch (err) { view.append(h('p', { class: 'alert' }, err.message)); return; }
    if (!node) {
      view.append(h('p', { class: 'alert', id: 'adopt-missing' }, `${id} is not waiting for adoption. `, h('a', { href: '#/nodes' }, 'Back to the nodes')));
      return;
    }
    const gpioBox = h('div', { id: 'gpio-header' }, gpioHeader(node.pins));
    api.management('get_gpio_status', { node_id: id }).then((g) => { if (alive) gpioBox.replaceChildren(gpioHeader(g.pins)); }).catch(() => {});
    const info = h('dl', { class: 'kv' }, [
      ['Hardware', node.hardware_rev], ['Firmware', node.firmware_version],
      ['CPU temp', node.cpu_temp ? `${node.cpu_temp.toFixed(1)} °C` : ''], ['First seen', ago(node.first_seen, api.serverNow())],
      ['Last seen', ago(node.last_seen, api.serverNow())],
      // The key is what the bus authenticated under this id: the operator
      // compares its fingerprint with the one the node prints at boot
      // (below). The CA is only what the device says it pinned: a device
      // that took the id can say the same, so it proves nothing.
      ['Bus key (authenticated)', node.bus_key],
      ['Server CA it says it pinned (its own claim, unverified)', node.bus_ca_sha256],
      // Enrolled when flashed: the server knew the key before the node
      // connected, so no other device can hold this id.
      ['Enrolment', node.bus_key ? (node.bus_key_enrolled ? 'enrolled: the key this node was flashed with'
        : 'not enrolled: type the key fingerprint the node prints at start below') : ''],
    ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', k === 'Enrolment' ? { id: 'adopt-enrolment', class: node.bus_key_enrolled ? '' : 'alert' } : {}, v || '–')]));
    // A key that is not the one the node logs at start: a device took the
    // node's id first. Rejecting it disconnects and refuses that device, and
    // frees the id for the node's own key.
    const rejectKey = node.bus_key ? h('p', {}, h('button', { type: 'button', class: 'danger', id: 'reject-key', onclick: async () => {
      if (!await confirm(`Reject bus key ${node.bus_key}? The device connected as ${id} with it is disconnected and refused from now on. Do this only when the node logs another key at start (allow_node_key lets it in again).`, 'Reject key')) return;
      try {
        const r = await api.management('reject_node_key', { node_id: id, bus_key: node.bus_key });
        toast(r.message || 'Key rejected');
        go('/nodes');
      } catch (err) { toast(err.message, 'error'); }
    } }, 'Not the node\'s key: reject it')) : null;
    const nameInput = h('input', { id: 'adopt-name', 'data-field': 'display_name', required: true, maxlength: 64 });
    // On an authenticated bus the operator types the fingerprint the node
    // printed on its console at boot: adopting binds the key shown above,
    // so it must be the node's, not a device's that took its id. An
    // enrolled node's key is the one it was flashed with: nothing to type.
    const printed = node.bus_key && !node.bus_key_enrolled ? h('input', { id: 'adopt-fingerprint', 'data-field': 'bus_key', required: true, autocomplete: 'off',
      spellcheck: 'false', placeholder: 'ABCD EFGH IJKL MNOP' }) : null;
    const submit = h('button', { type: 'submit', class: 'primary', id: 'adopt-submit', disabled: true }, 'Adopt');
    let chosen = null;
    let nameTouched = false;
    nameInput.addEventListener('input', () => { nameTouched = true; });
    const radios = choices.roles.map((r, i) => h('label', {},
      h('input', { type: 'radio', name: 'role', value: `${r.value}:${r.instance}`, id: `role-${r.value}${r.instance ? '-' + r.instance : ''}`,
        'data-field': i === 0 ? 'role' : null,
        onchange: () => {
          chosen = r;
          submit.disabled = false;
          submit.textContent = `Adopt as ${r.label}`;
          if (!nameTouched) nameInput.value = `${r.label} Unit`;
        } }),
      h('span', {}, h('strong', {}, r.label), ` – ${r.text}`)));
    const form = h('form', { id: 'adopt-form', onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      if (!chosen) { showError(form, { field: 'role', message: 'role: choose a role' }); return; }
      if (printed && !sameKey(printed.value, node.bus_key)) {
        showError(form, { field: 'bus_key', message: `bus_key: ${printed.value.trim() ? `"${printed.value.trim()}" is not` : 'type'} the fingerprint ` +
          'of the key this device connects with (at least 16 characters). If the node printed another, a device took its id: do not adopt it, reject the key.' });
        return;
      }
      submit.disabled = true;
      submit.textContent = 'Adopting…';
      try {
        // The key shown above: the server refuses the adoption if the
        // node connects with another one by now.
        const r = await api.management('adopt_node', {
          node_id: id, role: chosen.value, instance: chosen.instance, display_name: nameInput.value, bus_key: node.bus_key || undefined,
        });
        toast(r.message || 'Adopted');
        go('/nodes');
      } catch (err) {
        showError(form, err);
        submit.disabled = false;
        submit.textContent = `Adopt as ${chosen.label}`;
      }
    } },
    h('fieldset', { class: 'roles' }, h('legend', {}, 'Role'),
      declaredNote(choices.robotType), radios),
    field('Display name', nameInput),
    printed ? field('Key fingerprint the node printed at boot', printed,
      'From the node\'s console or serial log ("bus key: ..." fingerprint=...), never from this page.') : null,
    h('p', { class: 'form-error', role: 'alert' }),
    h('div', { class: 'actions' }, h('a', { class: 'button', href: '#/nodes' }, 'Cancel'), submit));
    view.append(
      h('div', { class: 'grid two' },
        card('Node information', info, rejectKey, h('h3', {}, 'Peripherals detected'), peripheralsList(node.peripherals)),
        card('GPIO detected', gpioBox)),
      card('Select role', form));
  })();
  return () => { alive = false; };
}
