package rigid

import (
	"errors"
	"math"

	"github.com/saint-os/saint/sim/model/geom"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Joint is one hinge and the body it moves.
type Joint struct {
	Offset   geom.Vec3 // joint origin in the parent body's frame (the base's for the first), m
	Axis     geom.Vec3 // rotation axis in the parent body's frame, unit
	Mass     float64   // body mass, kg
	COM      geom.Vec3 // centre of mass in the body's frame, m
	Inertia  geom.Mat3 // about the centre of mass, body frame, kg·m²
	Armature float64   // rotor inertia reflected at the joint, kg·m²
}

// spatial is a 6-D vector, angular part first.
type spatial [6]float64

func join(a, l geom.Vec3) spatial { return spatial{a[0], a[1], a[2], l[0], l[1], l[2]} }

func (s spatial) add(t spatial) spatial {
	for i := range s {
		s[i] += t[i]
	}
	return s
}

func (s spatial) scale(k float64) spatial {
	for i := range s {
		s[i] *= k
	}
	return s
}

func (s spatial) dot(t spatial) float64 {
	var d float64
	for i := range s {
		d += s[i] * t[i]
	}
	return d
}

// crossMotion is v ×ₘ m = (ω×a, ω×b + u×a) for v = (ω, u), m = (a, b).
func crossMotion(v, m *spatial) (o spatial) {
	o[0] = v[1]*m[2] - v[2]*m[1]
	o[1] = v[2]*m[0] - v[0]*m[2]
	o[2] = v[0]*m[1] - v[1]*m[0]
	o[3] = v[1]*m[5] - v[2]*m[4] + v[4]*m[2] - v[5]*m[1]
	o[4] = v[2]*m[3] - v[0]*m[5] + v[5]*m[0] - v[3]*m[2]
	o[5] = v[0]*m[4] - v[1]*m[3] + v[3]*m[1] - v[4]*m[0]
	return o
}

// crossForce is v ×f f = (ω×n + u×f, ω×f) for v = (ω, u), f = (n, f).
func crossForce(v, f *spatial) (o spatial) {
	o[0] = v[1]*f[2] - v[2]*f[1] + v[4]*f[5] - v[5]*f[4]
	o[1] = v[2]*f[0] - v[0]*f[2] + v[5]*f[3] - v[3]*f[5]
	o[2] = v[0]*f[1] - v[1]*f[0] + v[3]*f[4] - v[4]*f[3]
	o[3] = v[1]*f[5] - v[2]*f[4]
	o[4] = v[2]*f[3] - v[0]*f[5]
	o[5] = v[0]*f[4] - v[1]*f[3]
	return o
}

// inertia is a spatial inertia about the world origin: mass m, first
// moment h = m·c, rotational inertia io about the origin.
type inertia struct {
	m  float64
	h  geom.Vec3
	io geom.Mat3
}

func (a *inertia) add(b *inertia) {
	a.m += b.m
	a.h = a.h.Add(b.h)
	for i := range a.io {
		for j := range a.io[i] {
			a.io[i][j] += b.io[i][j]
		}
	}
}

// apply is I·v = (I_O·ω + h×u, m·u − h×ω) for v = (ω, u).
func (a *inertia) apply(v *spatial) (o spatial) {
	h, io := &a.h, &a.io
	o[0] = io[0][0]*v[0] + io[0][1]*v[1] + io[0][2]*v[2] + h[1]*v[5] - h[2]*v[4]
	o[1] = io[1][0]*v[0] + io[1][1]*v[1] + io[1][2]*v[2] + h[2]*v[3] - h[0]*v[5]
	o[2] = io[2][0]*v[0] + io[2][1]*v[1] + io[2][2]*v[2] + h[0]*v[4] - h[1]*v[3]
	o[3] = a.m*v[3] - h[1]*v[2] + h[2]*v[1]
	o[4] = a.m*v[4] - h[2]*v[0] + h[0]*v[2]
	o[5] = a.m*v[5] - h[0]*v[1] + h[1]*v[0]
	return o
}

// Chain is a serial chain of hinges from a fixed base.
type Chain struct {
	joints  []Joint
	base    geom.Vec3 // base origin, world, m
	gravity geom.Vec3 // m/s², world

	n      int
	rot    []geom.Mat3 // body frames, world
	origin []geom.Vec3 // joint origins, world
	axis   []geom.Vec3 // joint axes, world
	s      []spatial   // motion subspaces
	body   []inertia   // bodies, world
	comp   []inertia   // composite bodies
	vel    []spatial
	force  []spatial
	m      *mat.SymDense
	bias   []float64
	factor []float64 // M's Cholesky factor, row major, upper triangle
	unit   []float64 // M⁻¹·eᵢ for Stop

	factored bool      // factor is M's of the last Update
	lastQ    []float64 // positions of the last Update
	atRest   bool      // the last Update's rates were within UpdateNear's tolerance
}

// New returns a chain of joints on a base at origin (world frame, axes
// aligned with the world's) under gravity (m/s², world).
func New(base geom.Vec3, gravity geom.Vec3, joints []Joint) *Chain {
	n := len(joints)
	return &Chain{
		joints: append([]Joint(nil), joints...), base: base, gravity: gravity, n: n,
		rot: make([]geom.Mat3, n), origin: make([]geom.Vec3, n), axis: make([]geom.Vec3, n),
		s: make([]spatial, n), body: make([]inertia, n), comp: make([]inertia, n),
		vel: make([]spatial, n), force: make([]spatial, n),
		m: mat.NewSymDense(n, nil), bias: make([]float64, n),
		factor: make([]float64, n*n), unit: make([]float64, n), lastQ: make([]float64, n),
	}
}

// Len returns the number of joints.
func (c *Chain) Len() int { return c.n }

// Joint returns joint i's description.
func (c *Chain) Joint(i int) Joint { return c.joints[i] }

// SetBody changes body i's mass properties (a held object, say).
func (c *Chain) SetBody(i int, mass float64, com geom.Vec3, inertia geom.Mat3) {
	c.joints[i].Mass, c.joints[i].COM, c.joints[i].Inertia = mass, com, inertia
	c.atRest = false // the next UpdateNear computes everything again
}

// rotation is the rotation by angle about unit axis (Rodrigues).
func rotation(axis geom.Vec3, angle float64) geom.Mat3 {
	s, co := math.Sincos(angle)
	t := 1 - co
	x, y, z := axis[0], axis[1], axis[2]
	return geom.Mat3{
		{t*x*x + co, t*x*y - s*z, t*x*z + s*y},
		{t*x*y + s*z, t*y*y + co, t*y*z - s*x},
		{t*x*z - s*y, t*y*z + s*x, t*z*z + co},
	}
}

// Update computes the kinematics, the mass matrix and the bias forces for
// positions q and velocities qd (rad, rad/s; one per joint).
func (c *Chain) Update(q, qd []float64) {
	r, p := geom.Identity(), c.base
	for i := 0; i < c.n; i++ {
		j := &c.joints[i]
		p = p.Add(r.Apply(j.Offset))
		z := r.Apply(j.Axis)
		r = r.Mul(rotation(j.Axis, q[i]))
		c.rot[i], c.origin[i], c.axis[i] = r, p, z
		c.s[i] = join(z, p.Cross(z))
		com := p.Add(r.Apply(j.COM))
		ic := r.Mul(j.Inertia).Mul(transpose(r))
		cc := com.Dot(com)
		for a := 0; a < 3; a++ {
			for b := 0; b < 3; b++ {
				ic[a][b] -= j.Mass * com[a] * com[b]
				if a == b {
					ic[a][b] += j.Mass * cc
				}
			}
		}
		c.body[i] = inertia{m: j.Mass, h: com.Scale(j.Mass), io: ic}
	}
	c.massMatrix()
	c.newtonEuler(qd)
	copy(c.lastQ, q)
	c.factored, c.atRest = false, false
}

// UpdateNear is Update unless the chain is nearly at rest near the pose of
// the last Update: every position within poseTol (rad) of it and every
// rate, now and then, within rateTol (rad/s). Then the last mass matrix,
// its factorisation and bias stand: the gravity terms differ by the
// gradient times poseTol, the Coriolis terms (quadratic in the rates) by
// about the mass matrix times rateTol². A chain holding still — a servo
// holding a pose creeps by a few ulp a step — so costs a triangular solve
// per step.
func (c *Chain) UpdateNear(q, qd []float64, poseTol, rateTol float64) {
	if c.Near(q, qd, poseTol, rateTol) {
		return
	}
	c.Update(q, qd)
	rest := true
	for i := 0; i < c.n; i++ {
		if !(math.Abs(qd[i]) <= rateTol) {
			rest = false
		}
	}
	c.atRest = rest
}

// Near reports whether UpdateNear with these arguments would keep the
// last mass matrix and bias: the chain was at rest at its last Update and
// q and qd are within poseTol and rateTol of it.
func (c *Chain) Near(q, qd []float64, poseTol, rateTol float64) bool {
	if !c.atRest {
		return false
	}
	for i := 0; i < c.n; i++ {
		if !(math.Abs(q[i]-c.lastQ[i]) <= poseTol && math.Abs(qd[i]) <= rateTol) {
			return false
		}
	}
	return true
}

func transpose(m geom.Mat3) geom.Mat3 {
	return geom.Mat3{{m[0][0], m[1][0], m[2][0]}, {m[0][1], m[1][1], m[2][1]}, {m[0][2], m[1][2], m[2][2]}}
}

// massMatrix is the composite-rigid-body algorithm.
func (c *Chain) massMatrix() {
	for i := c.n - 1; i >= 0; i-- {
		c.comp[i] = c.body[i]
		if i+1 < c.n {
			c.comp[i].add(&c.comp[i+1])
		}
	}
	for i := 0; i < c.n; i++ {
		f := c.comp[i].apply(&c.s[i])
		for j := 0; j <= i; j++ {
			v := c.s[j].dot(f)
			if i == j {
				v += c.joints[i].Armature
			}
			c.m.SetSym(j, i, v)
		}
	}
}

// newtonEuler is the recursive Newton–Euler algorithm with q̈ = 0: the
// joint torques that hold the present velocities against gravity.
func (c *Chain) newtonEuler(qd []float64) {
	var v spatial
	a := join(geom.Vec3{}, c.gravity.Scale(-1))
	for i := 0; i < c.n; i++ {
		sv := c.s[i].scale(qd[i])
		v = v.add(sv)
		a = a.add(crossMotion(&v, &sv))
		c.vel[i] = v
		b := &c.body[i]
		iv := b.apply(&v)
		c.force[i] = b.apply(&a).add(crossForce(&v, &iv))
	}
	var f spatial
	for i := c.n - 1; i >= 0; i-- {
		f = f.add(c.force[i])
		c.bias[i] = c.s[i].dot(f)
	}
}

// MassMatrix returns M(q) of the last Update, armature included; it is the
// chain's own matrix, valid until the next Update.
func (c *Chain) MassMatrix() *mat.SymDense { return c.m }

// Bias returns C(q, q̇)·q̇ + g(q) of the last Update, N·m per joint; the
// chain's own slice, valid until the next Update.
func (c *Chain) Bias() []float64 { return c.bias }

// Origin returns joint i's origin and Axis its axis (world) after Update.
func (c *Chain) Origin(i int) geom.Vec3 { return c.origin[i] }

// Axis returns joint i's axis, world frame, after Update.
func (c *Chain) Axis(i int) geom.Vec3 { return c.axis[i] }

// Frame returns body i's orientation, world frame, after Update.
func (c *Chain) Frame(i int) geom.Mat3 { return c.rot[i] }

// ErrSingular is returned when the mass matrix cannot be factorised (a
// chain with massless bodies and no armature).
var ErrSingular = errors.New("rigid: mass matrix not positive definite")

// Accelerations solves M·q̈ = tau − bias for the last Update into qdd.
func (c *Chain) Accelerations(tau, qdd []float64) error {
	for i := 0; i < c.n; i++ {
		qdd[i] = tau[i] - c.bias[i]
	}
	return c.solve(qdd[:c.n])
}

// solve overwrites x with M⁻¹·x by the Cholesky factorisation of M
// (LAPACK's dpotrf as gonum implements it, in the chain's own workspace,
// once per Update) and two triangular substitutions.
func (c *Chain) solve(x []float64) error {
	if !c.factored {
		raw := c.m.RawSymmetric()
		for i := 0; i < c.n; i++ {
			copy(c.factor[i*c.n+i:(i+1)*c.n], raw.Data[i*raw.Stride+i:i*raw.Stride+c.n])
		}
		sym := blas64.Symmetric{Uplo: blas.Upper, N: c.n, Stride: c.n, Data: c.factor}
		if _, ok := lapack64.Potrf(sym); !ok {
			return ErrSingular
		}
		c.factored = true
	}
	// M = UᵀU: solve Uᵀ·y = x, then U·x = y. Written out: for the few
	// joints of a chain it is several times faster than the general BLAS
	// triangular solve, and it runs four times a step.
	n, u := c.n, c.factor
	for i := 0; i < n; i++ {
		v := x[i]
		for k := 0; k < i; k++ {
			v -= u[k*n+i] * x[k]
		}
		x[i] = v / u[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		v := x[i]
		for k := i + 1; k < n; k++ {
			v -= u[i*n+k] * x[k]
		}
		x[i] = v / u[i*n+i]
	}
	return nil
}

// Stop ends joint i's motion as an inelastic hard stop does: an impulse
// at that joint alone, λ = −q̇ᵢ / (M⁻¹)ᵢᵢ, brings its rate to zero and
// changes the other joints' rates by M⁻¹·eᵢ·λ, as the stop's reaction
// moves the whole chain. It updates the chain at (q, qd) and changes qd.
func (c *Chain) Stop(i int, q, qd []float64) error {
	c.Update(q, qd)
	clear(c.unit)
	c.unit[i] = 1
	if err := c.solve(c.unit); err != nil {
		return err
	}
	lambda := -qd[i] / c.unit[i]
	for k := 0; k < c.n; k++ {
		qd[k] += c.unit[k] * lambda
	}
	qd[i] = 0
	return nil
}
