// The administration UI's shell: the connection, the hash router that
// shows one page at a time, the login form and the confirm dialog.
import { Api } from './api.js';
import { h } from './dom.js';
import { dashboardPage } from './pages/dashboard.js';
import { nodesPage, nodeDetailPage, adoptPage } from './pages/nodes.js';
import { routesPage, editRoutePage } from './pages/routes.js';
import { inputsPage } from './pages/inputs.js';
import { settingsPage } from './pages/settings.js';
import { logsPage } from './pages/logs.js';
import { robotPage } from './pages/robot.js';

const routes = [
  [/^\/?$/, dashboardPage, 'dashboard'],
  [/^\/nodes$/, nodesPage, 'nodes'],
  [/^\/nodes\/adopt\/([^/]+)$/, adoptPage, 'nodes'],
  [/^\/nodes\/([^/]+)$/, nodeDetailPage, 'nodes'],
  [/^\/routes$/, routesPage, 'routes'],
  [/^\/routes\/edit\/([^/]+)$/, editRoutePage, 'routes'],
  [/^\/inputs$/, inputsPage, 'inputs'],
  [/^\/settings$/, settingsPage, 'settings'],
  [/^\/logs$/, logsPage, 'logs'],
  [/^\/robot$/, robotPage, 'robot'],
];

const api = new Api();
const view = document.getElementById('view');
const connEl = document.getElementById('conn-state');
const toasts = document.getElementById('toasts');
let cleanup = null;
let shownFor = null;

function toast(text, kind = 'info') {
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
  toasts.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

// confirmDialog asks before something that cannot be undone.
function confirmDialog(text, okLabel = 'Confirm') {
  const dlg = document.getElementById('confirm');
  dlg.querySelector('#confirm-text').textContent = text;
  dlg.querySelector('#confirm-ok').textContent = okLabel;
  dlg.showModal();
  dlg.querySelector('#confirm-cancel').focus();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
  });
}

function go(hash) { location.hash = hash; }

const ctx = { api, toast, confirm: confirmDialog, go };

function currentPath() { return decodeURIComponent(location.hash.replace(/^#/, '')) || '/'; }

function show() {
  const path = currentPath();
  if (cleanup) { try { cleanup(); } catch { /* a page's cleanup must not stop the next */ } }
  cleanup = null;
  let match = null;
  for (const [re, page, nav] of routes) {
    const m = path.match(re);
    if (m) { match = { page, nav, params: m.slice(1) }; break; }
  }
  document.querySelectorAll('nav a').forEach((a) => {
    if (match && a.dataset.nav === match.nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  view.replaceChildren();
  shownFor = path;
  if (!match) {
    view.append(h('h1', {}, 'Not found'), h('p', {}, `No page at ${path}. `, h('a', { href: '#/' }, 'Back to the dashboard')));
    return;
  }
  if (api.state !== 'online') {
    view.append(h('p', { class: 'muted', id: 'waiting' }, 'Waiting for the server…'));
    shownFor = null;
    return;
  }
  cleanup = match.page(ctx, view, ...match.params) || null;
  const heading = view.querySelector('h1');
  if (heading && document.activeElement === document.body) heading.setAttribute('tabindex', '-1');
}

const stateText = { connecting: 'Connecting…', online: 'Online', login: 'Login required', offline: 'Offline' };

api.onState((state, detail) => {
  connEl.dataset.state = state;
  connEl.textContent = `Status: ${stateText[state] || state}`;
  connEl.title = detail || '';
  const login = document.getElementById('login');
  document.getElementById('logout').hidden = !api.authRequired;
  // While the login form is up, the page behind it takes no focus.
  for (const el of document.querySelectorAll('main, nav, header .brand')) el.inert = state === 'login';
  if (state === 'login') {
    login.hidden = false;
    login.querySelector('.form-error').textContent = api.token ? detail : '';
    login.querySelector('input').focus();
  } else if (state === 'online') {
    login.hidden = true;
  }
  if (state === 'online' && shownFor === null) show();
  if (state !== 'online' && state !== 'connecting' && shownFor !== null && cleanup) {
    cleanup();
    cleanup = null;
    shownFor = null;
  }
});

document.getElementById('login-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = document.getElementById('login-token');
  const token = input.value.trim();
  if (!token) {
    ev.target.querySelector('.form-error').textContent = 'token: enter the API token';
    return;
  }
  input.value = '';
  api.login(token);
});

document.getElementById('logout').addEventListener('click', () => { api.logout(); });

// The skip link moves the focus; following its href would change the route.
document.querySelector('.skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  view.focus();
});

window.addEventListener('hashchange', () => { shownFor = null; show(); });
api.connect();
show();
