// Settings: every setting of the server (get_settings/set_settings) with
// errors beside their field, firmware status and upload, the API token and
// maintenance actions.
import { h, card, table, field, showError, clearErrors, fmtDateTime } from '../dom.js';
import { storeToken } from '../api.js';
import { download } from './logs.js';

function hex(buf) {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// uploadFirmware posts the image with XMLHttpRequest, whose upload
// progress events drive the progress bar.
export function uploadFirmware(form, token, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/firmware');
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (ev) => { if (ev.lengthComputable) onProgress(ev.loaded / ev.total); };
    xhr.onload = () => {
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch { body = { message: xhr.responseText || xhr.statusText }; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(Object.assign(new Error(body.message || `HTTP ${xhr.status}`), { field: body.field || '' }));
    };
    xhr.onerror = () => reject(new Error('upload failed: the connection to the server broke'));
    xhr.send(form);
  });
}

export function settingsPage({ api, toast, confirm }, view) {
  view.append(h('h1', {}, 'Settings'));
  const fwBox = h('div', { id: 'firmware-status' });
  const tokenBox = h('div', { id: 'token' });
  let alive = true;

  (async () => {
    let doc;
    try { doc = await api.management('get_settings'); } catch (err) { view.append(h('p', { class: 'alert' }, err.message)); return; }
    if (!alive) return;
    const s = doc.settings;
    const netInfo = h('p', { class: 'muted', id: 'network' });
    api.command('system', 'status').then((st) => {
      netInfo.textContent = `Internal network: ${st.internal_address || 'not measured'} · External network: ${st.external_address || 'not measured'}`;
    }).catch(() => {});
    const inp = (name, value, attrs = {}) => h('input', { 'data-field': name, id: `set-${name.replace(/\./g, '-')}`, value: value === undefined ? '' : value, ...attrs });
    const chk = (name, value) => h('input', { type: 'checkbox', 'data-field': name, id: `set-${name.replace(/\./g, '-')}`, checked: !!value });
    const sel = (name, value, options) => h('select', { 'data-field': name, id: `set-${name.replace(/\./g, '-')}` }, options.map((o) => h('option', { value: o, selected: o === value }, o)));
    // The RC receiver's configuration is rc_receiver.yaml, changed with the
    // rc commands on the Inputs page: shown here, read-only.
    const rc = s.rc || {};
    const ro = (el) => { el.disabled = true; el.setAttribute('aria-readonly', 'true'); return el; };
    const f = {
      serverName: inp('system.server_name', s.system.server_name),
      hostname: inp('system.hostname', s.system.hostname),
      llEnabled: chk('livelink.enabled', s.livelink.enabled),
      llExternal: chk('livelink.external', s.livelink.external),
      discovery: inp('livelink.discovery_port', s.livelink.discovery_port, { type: 'number' }),
      data: inp('livelink.data_port', s.livelink.data_port, { type: 'number' }),
      broadcast: inp('livelink.broadcast_name', s.livelink.broadcast_name),
      rcEnabled: ro(chk('rc.enabled', rc.enabled)),
      protocol: ro(sel('rc.protocol', rc.protocol, ['pwm', 'ppm', 'sbus', 'ibus', 'crsf'])),
      fsAction: ro(sel('rc.failsafe.action', rc.failsafe && rc.failsafe.action, ['hold', 'neutral', 'estop', 'passthrough'])),
      fsTimeout: ro(inp('rc.failsafe.timeout_ms', rc.failsafe && rc.failsafe.timeout_ms, { type: 'number' })),
      uartDevice: ro(inp('rc.uart.device', rc.uart && rc.uart.device)),
      uartBaud: ro(inp('rc.uart.baud_rate', rc.uart && rc.uart.baud_rate, { type: 'number' })),
      uartInverted: ro(chk('rc.uart.inverted', rc.uart && rc.uart.inverted)),
      ppmPin: ro(inp('rc.gpio.ppm_pin', rc.gpio && rc.gpio.ppm_pin, { type: 'number' })),
      pwmPins: ro(inp('rc.gpio.pwm_pins', rc.gpio && (rc.gpio.pwm_pins || []).join(', '))),
      authRequired: chk('auth.required', s.auth.required),
    };
    const intOr = (e) => (e.value === '' ? 0 : Number(e.value));
    const form = h('form', { id: 'settings-form', novalidate: true, onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      const patch = {
        system: { server_name: f.serverName.value, hostname: f.hostname.value },
        livelink: { enabled: f.llEnabled.checked, external: f.llExternal.checked, discovery_port: intOr(f.discovery), data_port: intOr(f.data), broadcast_name: f.broadcast.value },
        auth: { required: f.authRequired.checked },
      };
      try {
        await api.management('set_settings', patch);
        toast('Settings saved');
        form.querySelector('.form-ok').textContent = 'Saved.';
      } catch (err) {
        form.querySelector('.form-ok').textContent = '';
        showError(form, err);
      }
    } },
    card('System', h('div', { class: 'row' }, field('Server name', f.serverName), field('Hostname', f.hostname)),
      netInfo),
    card('LiveLink', h('label', { class: 'field inline' }, f.llEnabled, 'Enabled'),
      h('label', { class: 'field inline' }, f.llExternal, 'Listen on the network (phones and other machines; only allowed senders on the Inputs page are taken)'),
      h('div', { class: 'row' }, field('Discovery port', f.discovery), field('Data port', f.data), field('Broadcast name', f.broadcast))),
    card('RC receiver', h('label', { class: 'field inline' }, f.rcEnabled, 'Enabled'),
      h('div', { class: 'row' }, field('Protocol', f.protocol), field('Failsafe action', f.fsAction), field('Signal timeout (ms)', f.fsTimeout)),
      h('div', { class: 'row' }, field('UART device', f.uartDevice), field('Baud rate', f.uartBaud), h('label', { class: 'field inline' }, f.uartInverted, 'Inverted')),
      h('div', { class: 'row' }, field('PPM pin (BCM)', f.ppmPin), field('PWM pins (BCM, comma separated)', f.pwmPins)),
      h('p', {}, h('a', { href: '#/inputs' }, 'Change the receiver, configure channels and run calibration on the Inputs page →'))),
    card('Authentication', h('label', { class: 'field inline' }, f.authRequired, 'Require auth'),
      h('p', { class: 'muted' }, doc.auth_active ? 'Authentication is in force.' : 'Authentication is off for this server (saint-sim or --no-auth).'),
      tokenBox),
    h('p', { class: 'form-error', role: 'alert' }), h('p', { class: 'form-ok', role: 'status' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'save-settings' }, 'Save settings')));
    view.append(form, card('Firmware', fwBox), card('Maintenance', h('div', { class: 'actions' },
      h('a', { class: 'button', href: '#/logs' }, 'View System Logs'),
      h('button', { type: 'button', onclick: () => download(api).catch((err) => toast(err.message, 'error')) }, 'Download Diagnostics'),
      h('button', { type: 'button', onclick: () => power('reboot', 'Restart the server machine?') }, 'Restart Server'),
      h('button', { type: 'button', class: 'danger', onclick: () => power('shutdown', 'Shut the server machine down? It must be powered on by hand.') }, 'Shutdown System'))));
    showToken();
    showFirmware();
  })();

  async function power(action, question) {
    if (!await confirm(question, action === 'reboot' ? 'Restart' : 'Shut down')) return;
    try { toast((await api.command('system', action, { reason: 'requested from the web UI' })).message); } catch (err) { toast(err.message, 'error'); }
  }

  async function showToken() {
    let token = '';
    try { token = (await api.management('get_token')).token; } catch (err) { tokenBox.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    const shown = h('span', { class: 'token', id: 'token-value' }, '•'.repeat(16));
    let visible = false;
    tokenBox.replaceChildren(h('p', {}, 'API token: ', shown), h('div', { class: 'actions' },
      h('button', { type: 'button', 'aria-pressed': 'false', onclick: (ev) => {
        visible = !visible;
        shown.textContent = visible ? token : '•'.repeat(16);
        ev.target.setAttribute('aria-pressed', String(visible));
        ev.target.textContent = visible ? 'Hide' : 'Show';
      } }, 'Show'),
      h('button', { type: 'button', onclick: async () => {
        try { await navigator.clipboard.writeText(token); toast('Token copied'); } catch { visible = true; shown.textContent = token; toast('Select the token and copy it: the browser refused clipboard access', 'error'); }
      } }, 'Copy'),
      h('button', { type: 'button', class: 'danger', id: 'regenerate-token', onclick: async () => {
        if (!await confirm('Regenerate the API token? Every client, this one included, must use the new token.', 'Regenerate')) return;
        try {
          const r = await api.management('regenerate_token');
          storeToken(r.token);
          api.token = r.token;
          toast('New token stored in this browser');
        } catch (err) { toast(err.message, 'error'); }
      } }, 'Regenerate')));
  }

  async function showFirmware() {
    let st;
    try { st = await api.management('firmware_status'); } catch (err) { fwBox.replaceChildren(h('p', { class: 'alert' }, err.message)); return; }
    const repo = st.repository || {};
    const fw = repo.firmware || {};
    const file = h('input', { type: 'file', id: 'fw-file', 'data-field': 'image', required: true });
    const version = h('input', { id: 'fw-version', 'data-field': 'version', placeholder: '1.3.0', required: true });
    const sha = h('input', { id: 'fw-sha256', 'data-field': 'sha256', placeholder: 'computed from the file', spellcheck: 'false' });
    const changelog = h('textarea', { id: 'fw-changelog', 'data-field': 'changelog', rows: 2 });
    const progress = h('progress', { class: 'progress', id: 'fw-progress', max: 1, value: 0, hidden: true, 'aria-label': 'Upload progress' });
    file.addEventListener('change', async () => {
      const img = file.files[0];
      if (!img || !window.crypto || !crypto.subtle) return;
      sha.value = hex(await crypto.subtle.digest('SHA-256', await img.arrayBuffer()));
    });
    const form = h('form', { id: 'fw-form', onsubmit: async (ev) => {
      ev.preventDefault();
      clearErrors(form);
      if (!file.files[0]) { showError(form, { field: 'image', message: 'image: choose the firmware file' }); return; }
      const body = new FormData();
      body.append('version', version.value);
      body.append('sha256', sha.value);
      if (changelog.value) body.append('changelog', changelog.value);
      body.append('image', file.files[0]);
      progress.hidden = false;
      progress.value = 0;
      try {
        const r = await uploadFirmware(body, api.token, (p) => { progress.value = p; });
        progress.value = 1;
        toast(`Firmware ${r.version || version.value} published`);
        showFirmware();
      } catch (err) { showError(form, err); }
    } },
    h('h3', {}, 'Upload firmware'),
    h('div', { class: 'row' }, field('Image', file), field('Version', version), field('SHA-256', sha)),
    field('Changelog', changelog), progress,
    h('p', { class: 'form-error', role: 'alert' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Upload Firmware')));
    fwBox.replaceChildren(
      h('dl', { class: 'kv' },
        h('dt', {}, 'Current version'), h('dd', { id: 'fw-current' }, repo.available ? fw.version : `none (${repo.problem || 'no firmware published'})`),
        h('dt', {}, 'Released'), h('dd', {}, fw.release_date ? fmtDateTime(fw.release_date).slice(0, 10) : '–'),
        h('dt', {}, 'Changelog'), h('dd', {}, fw.changelog || '–')),
      table(['Node', 'Version', 'State', 'Up to date'], (st.nodes || []).map((n) => [n.node_id, n.version || '–', n.state || '–', n.up_to_date ? 'yes' : 'no']), 'No nodes'),
      h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => showFirmware() }, 'Check for Updates'),
        h('button', { type: 'button', onclick: async () => {
          if (!await confirm('Update every online node? Each reboots to fetch the firmware and resumes its role.', 'Update')) return;
          try {
            const r = await api.management('trigger_update', {});
            toast(r.nodes.map((n) => `${n.node_id}: ${n.message}`).join('; ') || 'No online nodes');
          } catch (err) { toast(err.message, 'error'); }
        } }, 'Update Nodes')),
      form);
  }

  return () => { alive = false; };
}
