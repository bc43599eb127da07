// The WebSocket API client: one connection to /api/ws on the page's own
// origin (so the server's Origin check passes), request/response matching
// by id, topic subscriptions shared by the pages, token authentication and
// reconnection with backoff.

const TOKEN_KEY = 'saint.api_token';

// ApiError carries the API's error object, so a form can put the message
// beside the field it names.
export class ApiError extends Error {
  constructor(err, message) {
    super(message || (err && err.message) || 'request failed');
    this.code = (err && err.code) || 'failed';
    this.field = (err && err.field) || '';
  }
}

export function storedToken() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

export function storeToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
  } catch { /* private mode: the token lives for this page only */ }
}

export class Api {
  constructor() {
    this.ws = null;
    this.seq = 0;
    this.pending = new Map();
    this.topics = new Map(); // topic → Set of handlers
    this.rates = new Map(); // topic → rate_hz it is subscribed at
    this.listeners = new Set(); // connection state listeners
    this.state = 'connecting';
    this.detail = '';
    this.backoff = 500;
    this.token = storedToken();
    this.retryTimer = 0;
    this.clockOffset = 0; // server clock − browser clock, ms
  }

  // serverNow is the server's clock in ms: under saint-sim that is the
  // simulated time, which the API's timestamps use.
  serverNow() { return Date.now() + this.clockOffset; }

  noteServerTime(seconds) {
    if (seconds > 0) this.clockOffset = seconds * 1000 - Date.now();
  }

  // onState registers fn(state, detail); state is one of connecting,
  // online, login (a token is needed) or offline. It returns the remover.
  onState(fn) {
    this.listeners.add(fn);
    fn(this.state, this.detail);
    return () => this.listeners.delete(fn);
  }

  setState(state, detail = '') {
    this.state = state;
    this.detail = detail;
    for (const fn of this.listeners) fn(state, detail);
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.setState('connecting');
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
    this.ws = ws;
    ws.onopen = () => this.authenticate();
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const p of this.pending.values()) p.reject(new ApiError({ code: 'failed' }, 'connection closed'));
      this.pending.clear();
      if (this.state === 'login') return; // waiting for the operator's token
      const wait = this.backoff;
      this.backoff = Math.min(this.backoff * 2, 10000);
      const why = ev.reason ? `${ev.reason}; ` : '';
      this.setState('offline', `${why}retrying in ${Math.round(wait / 1000)} s`);
      this.retryTimer = setTimeout(() => this.connect(), wait);
    };
  }

  // authenticate sends the auth message first; with authentication off the
  // server accepts it whatever the token.
  async authenticate() {
    try {
      const r = await this.send({ type: 'auth', token: this.token, client_id: 'admin_browser' });
      this.authRequired = !!r.auth_required;
    } catch (err) {
      this.authRequired = true;
      this.setState('login', err.message);
      return;
    }
    this.backoff = 500;
    this.command('system', 'status').then((s) => this.noteServerTime(s.timestamp)).catch(() => {});
    const byRate = new Map();
    for (const [topic, rate] of this.rates) byRate.set(rate, [...(byRate.get(rate) || []), topic]);
    for (const [rate, topics] of byRate) this.send({ type: 'subscribe', topics, rate_hz: rate }).catch(() => {});
    this.setState('online');
  }

  // login retries authentication with a token the operator typed.
  login(token) {
    this.token = token;
    storeToken(token);
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.setState('connecting');
      this.authenticate();
    } else {
      this.connect();
    }
  }

  logout() {
    this.token = '';
    storeToken('');
    if (this.ws) this.ws.close();
  }

  receive(text) {
    let m;
    try { m = JSON.parse(text); } catch { return; }
    if (m.type === 'response') {
      const p = this.pending.get(String(m.id));
      if (!p) return;
      this.pending.delete(String(m.id));
      if (m.status === 'ok') p.resolve(m.data);
      else p.reject(new ApiError(m.error, m.message));
      return;
    }
    if (m.type === 'state') {
      this.noteServerTime(m.timestamp);
      const set = this.topics.get(m.node);
      if (set) for (const fn of set) fn(m.data, m);
    }
  }

  send(msg) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new ApiError({ code: 'failed' }, 'not connected to the server'));
    }
    const id = String(++this.seq);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, ...msg }));
    });
  }

  call(type, action, params = {}) {
    return this.send({ type, action, params });
  }

  management(action, params) { return this.call('management', action, params); }
  router(action, params) { return this.call('router', action, params); }
  rc(action, params) { return this.call('rc', action, params); }
  command(target, action, params = {}) { return this.send({ type: 'command', target, action, params }); }

  // subscribe calls fn(data, message) for each state update on topic while
  // the page lives; it returns the function that ends the subscription.
  // rateHz limits the updates (10 a second by default); 0 takes every one,
  // for a topic several nodes share (joint_states), where a limit would
  // drop some nodes' updates in favour of others'.
  subscribe(topic, fn, rateHz = 10) {
    let set = this.topics.get(topic);
    if (!set) {
      set = new Set();
      this.topics.set(topic, set);
      this.rates.set(topic, rateHz);
      if (this.state === 'online') this.send({ type: 'subscribe', topics: [topic], rate_hz: rateHz }).catch(() => {});
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.topics.get(topic) === set) {
        this.topics.delete(topic);
        this.rates.delete(topic);
        if (this.state === 'online') this.send({ type: 'unsubscribe', topics: [topic] }).catch(() => {});
      }
    };
  }
}
