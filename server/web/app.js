// Minimal live node view over the WebSocket API; the full administration
// UI builds on the same calls.
const conn = document.getElementById('conn');
let ws, seq = 0;
const pending = new Map();

function call(type, action, params = {}) {
  const id = String(++seq);
  ws.send(JSON.stringify({ id, type, action, params }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows.map((cols) => {
    const tr = document.createElement('tr');
    tr.append(...cols.map(cell));
    return tr;
  }));
}

async function refresh() {
  const [adopted, unadopted] = await Promise.all([
    call('management', 'list_adopted'), call('management', 'list_unadopted')]);
  fill(document.getElementById('adopted'), adopted.nodes.map((n) => [
    n.node_id, n.instance ? `${n.role} ${n.instance}` : n.role, n.display_name,
    n.online ? `● Online (${n.last_status ? n.last_status.state : ''})` : '○ Offline']));
  fill(document.getElementById('unadopted'), unadopted.nodes.map((n) => [
    n.node_id, n.hardware_rev, n.firmware_version,
    n.peripherals.filter((p) => p.responsive).map((p) => p.description || p.address).join(', ')]));
}

function connect() {
  ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
  ws.onopen = () => { conn.textContent = 'Status: Online'; refresh(); };
  ws.onclose = () => { conn.textContent = 'Status: Offline'; setTimeout(connect, 1000); };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.status === 'ok') p.resolve(m.data); else p.reject(new Error(m.message));
  };
}

connect();
setInterval(() => { if (ws.readyState === WebSocket.OPEN) refresh().catch(() => {}); }, 1000);
