// Dashboard: system status, the live activity log, node summary with
// alerts, input sources, motor control, recording and the quick actions.
import { h, card, dot, fmtBytes, fmtDuration, fmtTime, roleLabel, table } from '../dom.js';

const LOG_LINES = 30;
const LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'];

export function logLine(e) {
  return h('li', { class: `lvl-${e.level}` },
    `${fmtTime(e.time)} `, h('strong', {}, e.level), ` [${e.source || '-'}${e.node ? ' ' + e.node : ''}] ${e.message}`);
}

export function dashboardPage({ api, toast, confirm, go }, view) {
  const banner = h('div', { id: 'estop-banner', class: 'estop-banner', hidden: true, role: 'alert' },
    h('span', {}, 'EMERGENCY STOP ACTIVE: all motion is stopped'),
    h('button', { type: 'button', id: 'estop-release', onclick: () => setEStop(false) }, 'Release E-Stop'));
  const sys = h('dl', { class: 'kv', id: 'system-status' });
  const nodes = h('ul', { class: 'list', id: 'node-summary' });
  const inputs = h('ul', { class: 'list', id: 'input-summary' });
  const motors = h('div', { id: 'motor-sessions' });
  const recState = h('dl', { class: 'kv', id: 'recording-status' });
  const recFiles = h('ul', { class: 'list', id: 'recording-files' });
  const recToggle = h('button', { type: 'button', id: 'record-toggle', disabled: true, onclick: toggleRecording }, 'Start recording');
  const recording = h('div', { id: 'recording' }, recState, recFiles, h('div', { class: 'actions' }, recToggle));
  const log = h('ol', { class: 'log', id: 'activity-log', 'aria-live': 'polite', reversed: true });
  const logLevel = h('select', { id: 'dash-log-level', 'aria-label': 'Minimum level' },
    [['', 'All levels'], ['INFO', 'Info+'], ['WARN', 'Warnings+'], ['ERROR', 'Errors']].map(([v, t]) => h('option', { value: v }, t)));
  logLevel.addEventListener('change', loadLog);
  const estopBtn = h('button', { type: 'button', class: 'danger', id: 'estop-all', onclick: () => setEStop(true) }, 'E-Stop All');

  view.append(
    h('h1', {}, 'Dashboard'),
    banner,
    h('div', { class: 'grid two' },
      card('System status', sys),
      card('Activity log', h('label', { class: 'field inline' }, h('span', { class: 'field-label' }, 'Show'), logLevel), log,
        h('p', {}, h('a', { href: '#/logs' }, 'All logs →')))),
    h('div', { class: 'grid two' },
      card('Nodes', nodes, h('p', {}, h('a', { href: '#/nodes' }, 'Manage nodes →'))),
      card('Inputs', inputs, h('p', {}, h('a', { href: '#/inputs' }, 'Input details →')))),
    card('Motor control', motors),
    card('Recording', recording),
    card('Quick actions', h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', id: 'adopt-new', onclick: adoptNew }, 'Adopt New Node'),
      estopBtn,
      h('button', { type: 'button', onclick: () => go('/logs') }, 'View Logs'),
      h('button', { type: 'button', id: 'system-restart', onclick: restart }, 'System Restart'))));

  async function setEStop(enable) {
    try {
      await api.command('system', 'estop', { enable });
      toast(enable ? 'Emergency stop engaged' : 'Emergency stop released');
      refresh();
    } catch (err) { toast(err.message, 'error'); }
  }

  async function adoptNew() {
    try {
      const r = await api.management('list_unadopted');
      if (r.nodes.length === 1) go(`/nodes/adopt/${encodeURIComponent(r.nodes[0].node_id)}`);
      else { if (!r.nodes.length) toast('No unadopted node has announced itself'); go('/nodes'); }
    } catch (err) { toast(err.message, 'error'); }
  }

  async function restart() {
    if (!await confirm('Restart the server machine? Every node loses the server until it is back.', 'Restart')) return;
    try {
      const r = await api.command('system', 'reboot', {});
      toast(r.message || 'Restarting');
    } catch (err) { toast(err.message, 'error'); }
  }

  // The nodes' active alerts (their warnings and errors of the last
  // minute), refreshed with every status and every 2 s.
  let nodeAlerts = {};
  let lastStatus = null;
  function loadAlerts() {
    api.management('get_node_alerts', {}).then((r) => {
      nodeAlerts = r.nodes || {};
      if (lastStatus) showStatus(lastStatus);
    }).catch(() => {});
  }

  function showStatus(s) {
    lastStatus = s;
    banner.hidden = !s.estop_active;
    estopBtn.disabled = !!s.estop_active;
    const kv = [
      ['Server', h('span', {}, dot(true, 'Online'), ` ${s.server_name} v${s.version}`)],
      ['Uptime', fmtDuration(s.uptime_seconds)],
      ['CPU', `${Math.round(s.cpu_usage)}%`],
      ['Memory', `${Math.round(s.memory_usage)}%`],
      ['CPU temp', s.cpu_temp ? `${s.cpu_temp.toFixed(1)} °C` : '–'],
      ['Internal', s.internal_address || '–'],
      ['External', s.external_address || '–'],
      ['Bus CA (SHA-256)', s.bus_ca_sha256 || '–'],
      ['E-Stop', s.estop_active ? h('span', { class: 'alert', id: 'estop-state' }, 'ACTIVE') : h('span', { id: 'estop-state' }, 'released')],
    ];
    sys.replaceChildren(...kv.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const rows = (s.nodes || []).map((n) => {
      const alerts = [];
      if (!n.online) alerts.push('offline');
      else if (n.state !== 'ACTIVE') alerts.push(n.state);
      if (n.cpu_temp >= 70) alerts.push(`hot ${n.cpu_temp.toFixed(0)} °C`);
      const raised = nodeAlerts[n.node_id] || [];
      const list = raised.length ? h('ul', { class: 'node-alerts', 'data-alerts': n.node_id },
        raised.slice(0, 3).map((a) => h('li', { class: `lvl-${a.level === 'error' ? 'ERROR' : 'WARN'}` },
          `${a.level === 'error' ? '✖' : '⚠'} [${a.source}] ${a.message}${a.count > 1 ? ` (×${a.count})` : ''}`)),
        raised.length > 3 ? h('li', { class: 'muted' }, `and ${raised.length - 3} more`) : null) : null;
      return h('li', { 'data-node': n.node_id },
        dot(n.online, ''), h('a', { href: `#/nodes/${encodeURIComponent(n.node_id)}` }, n.display_name || roleLabel(n.role, n.instance)),
        ` ${roleLabel(n.role, n.instance)} `, n.online ? 'Online' : 'Offline',
        n.online && n.cpu_temp ? ` ${n.cpu_temp.toFixed(0)} °C` : '',
        alerts.length ? h('span', { class: 'alert' }, ` ⚠ ${alerts.join(', ')}`) : null, list);
    });
    if (s.unadopted_count) {
      rows.push(h('li', { id: 'unadopted-summary' }, '? ', h('a', { href: '#/nodes' }, `${s.unadopted_count} unadopted`), ' waiting for adoption'));
    }
    if (!rows.length) rows.push(h('li', { class: 'muted' }, 'No nodes yet'));
    nodes.replaceChildren(...rows);
    inputs.replaceChildren(...(s.inputs || []).map((i) =>
      h('li', {}, dot(i.active, ''), h('strong', {}, i.source), ` ${i.enabled ? '' : 'disabled · '}${i.detail || (i.active ? 'active' : 'idle')}`)));
  }

  // showMotors tables the motor groups and who holds each (the root motor
  // middleware's sessions: a client's, or the router's for an output it
  // drives).
  function showMotors(st) {
    const sessions = st.sessions || [];
    const rows = (st.groups || []).map((g) => {
      const s = sessions.find((x) => (x.groups || []).includes(g.name));
      return {
        attrs: { 'data-group': g.name },
        cells: [
          h('span', {}, dot(g.online, ''), h('strong', {}, g.name)),
          (g.motor_ids || []).join(', ') || '–',
          g.held_by ? h('span', { class: 'alert', 'data-held-by': g.held_by }, g.held_by) : 'free',
          s ? (s.mode === 'ROLE' ? 'role commands' : s.mode || '–') : '–',
          s ? s.behavior || 'default' : '–',
        ],
      };
    });
    motors.replaceChildren(table(['Group', 'Motors', 'Held by', 'Mode', 'On release'], rows, 'No motor groups', [3, 4]));
  }

  // Recording: every bus topic to MCAP files in the server's recordings
  // directory (record_start / record_stop), for Foxglove, the mcap CLI or
  // saint-sim --replay.
  let recOn = false;
  // recBusy is set while a start or stop is under way, and recGen counts
  // them: a status the 2 s poll asked for before one must not undo what
  // the button shows.
  let recBusy = false;
  let recGen = 0;
  function showRecording(st) {
    recOn = !!st.recording;
    recording.dataset.recording = String(recOn);
    recording.dataset.messages = String(st.messages || 0);
    recToggle.disabled = false;
    recToggle.textContent = recOn ? 'Stop recording' : 'Start recording';
    recToggle.className = recOn ? 'danger' : 'primary';
    const base = (f) => f.split('/').pop();
    const kv = [['State', h('span', { id: 'recording-state' }, dot(recOn, recOn ? 'Recording' : 'Not recording'))]];
    if (recOn) kv.push(['File', base(st.file || '')]);
    if (recOn || (st.files || []).length) {
      kv.push(['Messages', String(st.messages || 0)]);
      if (recOn) kv.push(['Size', fmtBytes(st.bytes || 0)]);
      kv.push(['Dropped', st.dropped ? h('span', { class: 'alert' }, String(st.dropped)) : '0']);
    }
    if (st.error) kv.push(['Error', h('span', { class: 'alert' }, st.error)]);
    recState.replaceChildren(...kv.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const done = recOn ? (st.files || []).slice(0, -1) : (st.files || []);
    recFiles.replaceChildren(...done.map((f) => h('li', { title: f }, base(f))));
  }
  function loadRecording() {
    if (recBusy) return;
    const gen = recGen;
    const current = () => !recBusy && gen === recGen;
    api.management('record_status').then((st) => { if (current()) showRecording(st); }).catch((err) => {
      if (!current()) return;
      recToggle.disabled = true;
      recState.replaceChildren(h('dt', {}, 'State'), h('dd', { id: 'recording-state' }, `not available: ${err.message}`));
    });
  }
  async function toggleRecording() {
    recBusy = true;
    recGen++;
    recToggle.disabled = true;
    try {
      const st = await api.management(recOn ? 'record_stop' : 'record_start', {});
      recBusy = false;
      showRecording(st);
      toast(st.recording ? `Recording to ${(st.file || '').split('/').pop()}` : `Recording stopped: ${st.messages} messages in ${(st.files || []).length} file(s)`);
    } catch (err) { recBusy = false; toast(err.message, 'error'); loadRecording(); }
  }

  function addLog(e) {
    if (logLevel.value && LEVELS.indexOf(e.level) < LEVELS.indexOf(logLevel.value)) return;
    log.prepend(logLine(e));
    while (log.children.length > LOG_LINES) log.lastChild.remove();
  }

  function refresh() {
    api.command('system', 'status').then(showStatus).catch((err) => toast(err.message, 'error'));
    api.command('motors', 'status').then(showMotors).catch(() => {});
  }

  function loadLog() {
    const params = { limit: LOG_LINES };
    if (logLevel.value) params.level = logLevel.value;
    api.management('get_activity_log', params).then((r) => {
      log.replaceChildren(...r.events.map(logLine));
    }).catch((err) => toast(err.message, 'error'));
  }

  refresh();
  loadLog();
  loadAlerts();
  loadRecording();
  const alertTimer = setInterval(() => { loadAlerts(); loadRecording(); }, 2000);
  const offs = [api.subscribe('system', showStatus), api.subscribe('logs', addLog), api.subscribe('motors', showMotors), () => clearInterval(alertTimer)];
  return () => offs.forEach((off) => off());
}
