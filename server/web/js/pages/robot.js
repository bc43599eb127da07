// Robot: the robot drawn from the front and from the side, posed by the
// joint states its nodes publish: the humanoid's limbs, or the reference
// robot's arms and head on its torso and tracks. The server places each
// joint with the robot's kinematics (the numbers the simulator's physics
// uses) and sends the points on the joint_states topic; this page only
// projects and draws them, on a canvas, without libraries.
import { h, card } from '../dom.js';

// The limbs drawn and their colours: the left side blue, the right side
// orange, so that the side view tells the near limbs from the far ones.
const LIMBS = {
  leg_left: { color: '#1f5fbf' },
  leg_right: { color: '#d9822b' },
  arm_left: { color: '#1f5fbf' },
  arm_right: { color: '#d9822b' },
  neck: { color: '#5b6475' },
};

// What each view shows: the world box (m) and how a robot-frame point
// (x forward, y left, z up) maps to the view's horizontal axis. The front
// view looks at the robot's face (its left on the viewer's right), the
// side view at its right side (its front to the right).
const VIEWS = [
  { name: 'front', title: 'front', across: (p) => p[1] },
  { name: 'side', title: 'side (its right)', across: (p) => p[0] },
];
const WORLD_W = 1.1; // m across each view
const WORLD_TOP = 1.3; // m above the floor at the top of the view
const WORLD_BOTTOM = -0.05;
const BG = '#ffffff';
const STALE_MS = 1000; // a limb not heard from for this long is drawn as stale
const FOOT = 0.08; // m, the length of the foot's glyph (the model's foot has no length forward)
// The reference robot's body as drawn, m: its tracks (gauge 0.40 m, each
// 0.10 m wide, 0.60 m long) and a torso column of 0.12 m radius.
const TRACKS = { halfWidth: 0.25, halfLength: 0.30, height: 0.14 };
const TORSO_RADIUS = 0.12;

// limbName is the page's name for the part a joint_states update is of:
// a humanoid limb by its instance, the reference robot's arms as arm_left
// and arm_right and its head as the neck (drawn alike).
function limbName(d) {
  if (d.role === 'limb') return d.instance;
  if (d.role === 'arms') return `arm_${d.instance}`;
  if (d.role === 'head') return 'neck';
  return '';
}

export function robotPage({ api }, view) {
  const canvas = h('canvas', { id: 'robot-canvas', width: 760, height: 460, role: 'img',
    'aria-label': 'The robot from the front and from the side' });
  const status = h('p', { id: 'robot-status', class: 'muted' }, 'Waiting for joint states…');
  const legend = h('p', { class: 'legend' }, 'Blue: left limbs, orange: right limbs, grey: neck and head (a dot where the face looks). ',
    'The joints are placed by the robot\'s kinematics from each part\'s joint_states; the humanoid\'s torso hangs on its test stand.');
  view.append(h('div', { class: 'page-head' }, h('h1', {}, 'Robot')),
    card('Robot (front | side)', h('div', { class: 'canvas-wrap' }, canvas), status, legend));

  // scene is what the page knows and drew; it is also window.saintRobotView
  // so that tests (and a curious operator's console) can see it.
  const scene = { limbs: {}, frames: 0, drawn: {} };
  window.saintRobotView = scene;
  let dirty = true;
  let raf = 0;

  const stop = api.subscribe('joint_states', (d) => {
    const name = limbName(d);
    if (!Array.isArray(d.points) || !LIMBS[name]) return;
    scene.limbs[name] = { role: d.role, points: d.points, facing: d.facing, names: d.name, positions: d.position, at: performance.now() };
    dirty = true;
  }, 0);
  // Which parts the robot has that the page draws: the root motor
  // middleware's limb, arms and head groups. A robot without them gets a
  // sentence, not a wait for ever.
  scene.groups = null;
  const drawnPrefix = /^\/saint\/(limb\/|arms\/|head$)/;
  api.command('motors', 'status').then((st) => {
    scene.groups = (st.groups || []).filter((g) => drawnPrefix.test(g.prefix || '')).map((g) => g.name);
    dirty = true;
  }).catch(() => {});

  let staleKey = '';
  function frame() {
    raf = requestAnimationFrame(frame);
    // A limb whose node has gone quiet is drawn grey and dashed: what the
    // page shows is then where it last was, not where it is.
    const now = performance.now();
    scene.stale = Object.keys(scene.limbs).filter((n) => now - scene.limbs[n].at > STALE_MS).sort();
    if (scene.stale.join() !== staleKey) { staleKey = scene.stale.join(); dirty = true; }
    if (!dirty) return;
    dirty = false;
    draw(canvas, scene);
    const names = Object.keys(scene.limbs).sort();
    let text = names.length ? `${names.length} part${names.length === 1 ? '' : 's'}: ${names.join(', ')}` : 'Waiting for joint states…';
    if (!names.length && scene.groups && scene.groups.length === 0) {
      text = 'This robot has no arms, head or humanoid limbs among its motor groups: nothing to draw.';
    } else if (!names.length && scene.groups) {
      text = `Waiting for joint states from ${scene.groups.join(', ')} (adopt their nodes on the Nodes page).`;
    }
    if (scene.stale.length) text += `. No joint states for over ${STALE_MS / 1000} s from: ${scene.stale.join(', ')} (drawn grey, where last reported)`;
    status.textContent = text;
    status.className = scene.stale.length ? 'warn' : 'muted';
  }
  raf = requestAnimationFrame(frame);
  return () => { cancelAnimationFrame(raf); stop(); if (window.saintRobotView === scene) delete window.saintRobotView; };
}

// draw paints both views and records in scene.drawn, per view and limb,
// the pixels of the points it joined.
function draw(canvas, scene) {
  const g = canvas.getContext('2d');
  const W = canvas.width;
  const H = canvas.height;
  g.fillStyle = BG;
  g.fillRect(0, 0, W, H);
  const viewW = W / VIEWS.length;
  const scale = Math.min(viewW / WORLD_W, (H - 24) / (WORLD_TOP - WORLD_BOTTOM));
  scene.drawn = {};
  scene.frames++;
  VIEWS.forEach((v, k) => {
    const cx = viewW * k + viewW / 2;
    const floorY = H - 4 + WORLD_BOTTOM * scale;
    const px = (p) => [cx + v.across(p) * scale, floorY - p[2] * scale];
    g.setLineDash([]);
    g.fillStyle = '#5b6475';
    g.font = '13px system-ui, sans-serif';
    g.fillText(v.title, viewW * k + 8, 16);
    if (k > 0) {
      g.strokeStyle = '#d9dde5';
      g.lineWidth = 1;
      g.beginPath(); g.moveTo(viewW * k, 0); g.lineTo(viewW * k, H); g.stroke();
    }
    // The floor.
    g.strokeStyle = '#9aa3b2';
    g.lineWidth = 2;
    g.beginPath(); g.moveTo(viewW * k + 10, floorY); g.lineTo(viewW * (k + 1) - 10, floorY); g.stroke();
    const limbs = scene.limbs;
    const mount = (name) => (limbs[name] ? limbs[name].points[0] : null);
    const hipL = mount('leg_left'); const hipR = mount('leg_right');
    const shL = mount('arm_left'); const shR = mount('arm_right');
    const neck = mount('neck');
    // The test stand: a post from the floor, behind the torso, up to the
    // pelvis (the hips' height) and a bar holding it there.
    if (hipL || hipR) {
      const hip = hipL || hipR;
      const behind = [-0.18, 0, 0];
      const base = px([behind[0], 0, 0]); const top = px([behind[0], 0, hip[2]]);
      g.strokeStyle = '#b8bec9';
      g.lineWidth = 6;
      g.beginPath(); g.moveTo(base[0], base[1]); g.lineTo(top[0], top[1]);
      const pelvis = px([0, 0, hip[2]]);
      g.lineTo(pelvis[0], pelvis[1]); g.stroke();
      g.lineWidth = 3;
      const foot = 0.15;
      const f0 = px([behind[0] - foot, -foot, 0]); const f1 = px([behind[0] + foot, foot, 0]);
      g.beginPath(); g.moveTo(f0[0], f0[1]); g.lineTo(f1[0], f1[1]); g.stroke();
    }
    // The reference robot (arms or head, no legs): its tracks on the
    // floor, a torso column up to the neck and a bar between the shoulders.
    const reference = Object.values(limbs).some((l) => l.role === 'arms' || l.role === 'head');
    if (reference) drawReferenceBody(g, v, px, { shL, shR, neck });
    // The torso: the quadrilateral through the hips and the shoulders,
    // up to the neck's mount.
    const corners = [hipR, hipL, shL, shR].filter(Boolean);
    if ((hipL || hipR) && corners.length >= 3) {
      g.fillStyle = '#e4e8f0';
      g.strokeStyle = '#5b6475';
      g.lineWidth = 2;
      const pts = corners.map(px);
      // Seen from the side the four corners collapse into a thin band: draw
      // it as wide as the limbs' mounts allow (their x) plus a little.
      g.beginPath();
      if (v.name === 'side') {
        const zs = corners.map((c) => c[2]);
        const lo = Math.min(...zs); const hi = Math.max(...zs, neck ? neck[2] : -Infinity);
        const a = px([-0.06, 0, lo]); const b = px([0.06, 0, hi]);
        g.rect(a[0], b[1], b[0] - a[0], a[1] - b[1]);
      } else {
        // hips, the left shoulder, the neck's base either side, the right
        // shoulder
        const top = neck ? px(neck) : null;
        g.moveTo(pts[0][0], pts[0][1]);
        g.lineTo(pts[1][0], pts[1][1]);
        g.lineTo(pts[2][0], pts[2][1]);
        if (top && pts.length === 4) {
          g.lineTo((pts[2][0] + top[0]) / 2, top[1]);
          g.lineTo((pts[3][0] + top[0]) / 2, top[1]);
        }
        if (pts.length === 4) g.lineTo(pts[3][0], pts[3][1]);
        g.closePath();
      }
      g.fill(); g.stroke();
    }
    // The limbs, far side first so the near one covers it: seen from the
    // right the left limbs are behind.
    const order = v.name === 'side' ? ['leg_left', 'arm_left', 'neck', 'leg_right', 'arm_right'] : Object.keys(LIMBS);
    for (const name of order) {
      const limb = limbs[name];
      if (!limb) continue;
      const pts = limb.points.map(px);
      const stale = (scene.stale || []).includes(name);
      const c = stale ? '#b8bec9' : LIMBS[name].color;
      g.setLineDash(stale ? [6, 5] : []);
      g.strokeStyle = c;
      g.lineCap = 'round';
      g.lineJoin = 'round';
      g.lineWidth = name.startsWith('leg') ? 9 : 7;
      if (name === 'neck') {
        // The neck to the head's centre, the head a disc over its last link.
        const base = pts[pts.length - 2]; const tip = pts[pts.length - 1];
        g.lineWidth = 6;
        g.beginPath(); g.moveTo(pts[0][0], pts[0][1]); g.lineTo(base[0], base[1]); g.stroke();
        const r = Math.hypot(tip[0] - base[0], tip[1] - base[1]) / 2;
        g.fillStyle = '#eef1f6';
        g.lineWidth = 3;
        g.beginPath(); g.arc((base[0] + tip[0]) / 2, (base[1] + tip[1]) / 2, r * 1.05, 0, 2 * Math.PI); g.fill(); g.stroke();
        // The face: a dot where the head's x axis (facing) leaves it.
        const f = limb.facing;
        if (f) {
          const a = limb.points[limb.points.length - 2]; const b = limb.points[limb.points.length - 1];
          const half = Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]) / 2;
          const eye = px([0, 1, 2].map((i) => (a[i] + b[i]) / 2 + f[i] * half));
          g.fillStyle = c;
          g.beginPath(); g.arc(eye[0], eye[1], 3.5, 0, 2 * Math.PI); g.fill();
        }
      } else {
        g.beginPath();
        g.moveTo(pts[0][0], pts[0][1]);
        for (const p of pts.slice(1)) g.lineTo(p[0], p[1]);
        g.stroke();
        // A foot: a short bar from the sole the way the toes point.
        if (name.startsWith('leg') && limb.facing) {
          const sole = limb.points[limb.points.length - 1];
          const toe = px(sole.map((c, i) => c + limb.facing[i] * FOOT));
          const s0 = pts[pts.length - 1];
          g.lineWidth = 6;
          g.beginPath(); g.moveTo(s0[0], s0[1]); g.lineTo(toe[0], toe[1]); g.stroke();
        }
        g.fillStyle = '#ffffff';
        for (const p of pts.slice(0, -1)) { g.beginPath(); g.arc(p[0], p[1], 2.5, 0, 2 * Math.PI); g.fill(); }
      }
      scene.drawn[v.name] = scene.drawn[v.name] || {};
      scene.drawn[v.name][name] = pts.map((p) => [Math.round(p[0]), Math.round(p[1])]);
    }
  });
}

// drawReferenceBody draws the reference robot's tracks and torso in view v:
// a box for the tracks (both seen together from the side), the torso's
// column from the tracks to the neck's base (or above the shoulders) and,
// from the front, the bars the arms hang from.
function drawReferenceBody(g, v, px, { shL, shR, neck }) {
  const box = (a, b) => { const p = px(a); const q = px(b); g.rect(Math.min(p[0], q[0]), Math.min(p[1], q[1]), Math.abs(q[0] - p[0]), Math.abs(q[1] - p[1])); };
  const half = v.name === 'side' ? TRACKS.halfLength : TRACKS.halfWidth;
  const at = (across, z) => (v.name === 'side' ? [across, 0, z] : [0, across, z]);
  g.setLineDash([]);
  g.fillStyle = '#3a3f4b';
  g.beginPath(); box(at(-half, 0), at(half, TRACKS.height)); g.fill();
  const shoulders = [shL, shR].filter(Boolean);
  const top = neck ? neck[2] : Math.max(...shoulders.map((p) => p[2])) + 0.08;
  g.fillStyle = '#e4e8f0';
  g.strokeStyle = '#5b6475';
  g.lineWidth = 2;
  g.beginPath(); box(at(-TORSO_RADIUS, TRACKS.height), at(TORSO_RADIUS, top)); g.fill(); g.stroke();
  if (v.name !== 'side') {
    // From the torso's side out to each shoulder the arm hangs from.
    g.lineWidth = 6;
    for (const sh of shoulders) {
      const a = px([0, Math.sign(sh[1]) * TORSO_RADIUS, sh[2]]); const b = px(sh);
      g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(b[0], b[1]); g.stroke();
    }
  }
}
