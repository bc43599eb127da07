package geom

import "math"

// Vec3 is a 3-D vector.
type Vec3 [3]float64

// Add returns a+b.
func (a Vec3) Add(b Vec3) Vec3 { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Sub returns a-b.
func (a Vec3) Sub(b Vec3) Vec3 { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Scale returns s·a.
func (a Vec3) Scale(s float64) Vec3 { return Vec3{s * a[0], s * a[1], s * a[2]} }

// Dot returns a·b.
func (a Vec3) Dot(b Vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Cross returns a×b.
func (a Vec3) Cross(b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Norm returns |a|.
func (a Vec3) Norm() float64 { return math.Sqrt(a.Dot(a)) }

// Mat3 is a 3×3 matrix, row-major.
type Mat3 [3][3]float64

// Identity returns the identity matrix.
func Identity() Mat3 { return Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} }

// RotX returns the rotation by a radians about x.
func RotX(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

// RotY returns the rotation by a radians about y.
func RotY(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

// RotZ returns the rotation by a radians about z.
func RotZ(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// Mul returns m·n.
func (m Mat3) Mul(n Mat3) Mat3 {
	var r Mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[i][j] = m[i][0]*n[0][j] + m[i][1]*n[1][j] + m[i][2]*n[2][j]
		}
	}
	return r
}

// Apply returns m·v.
func (m Mat3) Apply(v Vec3) Vec3 {
	return Vec3{Vec3(m[0]).Dot(v), Vec3(m[1]).Dot(v), Vec3(m[2]).Dot(v)}
}

// ApplyT returns mᵀ·v: for a rotation, v expressed in the rotated frame.
func (m Mat3) ApplyT(v Vec3) Vec3 {
	return Vec3{
		m[0][0]*v[0] + m[1][0]*v[1] + m[2][0]*v[2],
		m[0][1]*v[0] + m[1][1]*v[1] + m[2][1]*v[2],
		m[0][2]*v[0] + m[1][2]*v[1] + m[2][2]*v[2],
	}
}

// Col returns column j: for a rotation, the rotated frame's axis j.
func (m Mat3) Col(j int) Vec3 { return Vec3{m[0][j], m[1][j], m[2][j]} }

// Capsule is a segment from A to B swollen by Radius: the shape of a limb.
type Capsule struct {
	A, B   Vec3
	Radius float64 // m
}

// Touches reports whether two capsules overlap. Capsules whose bounding
// spheres are apart are rejected before the segment distance is computed:
// most pairs in a collision check are.
func (c Capsule) Touches(d Capsule) bool {
	reach := c.B.Sub(c.A).Norm()/2 + d.B.Sub(d.A).Norm()/2 + c.Radius + d.Radius
	if gap := c.A.Add(c.B).Sub(d.A.Add(d.B)).Scale(0.5); gap.Dot(gap) >= reach*reach {
		return false
	}
	return SegmentDistance(c.A, c.B, d.A, d.B) < c.Radius+d.Radius
}

// BelowZ reports whether any point of the capsule lies below height z.
func (c Capsule) BelowZ(z float64) bool {
	return math.Min(c.A[2], c.B[2])-c.Radius < z
}

// SegmentDistance returns the shortest distance between segments p1–q1 and
// p2–q2 (Ericson, Real-Time Collision Detection, 5.1.9).
func SegmentDistance(p1, q1, p2, q2 Vec3) float64 {
	const eps = 1e-12
	d1, d2, r := q1.Sub(p1), q2.Sub(p2), p1.Sub(p2)
	a, e, f := d1.Dot(d1), d2.Dot(d2), d2.Dot(r)
	var s, t float64
	switch {
	case a <= eps && e <= eps:
		return r.Norm()
	case a <= eps:
		t = clamp01(f / e)
	default:
		c := d1.Dot(r)
		if e <= eps {
			s = clamp01(-c / a)
		} else {
			b := d1.Dot(d2)
			den := a*e - b*b
			if den > eps {
				s = clamp01((b*f - c*e) / den)
			}
			t = (b*s + f) / e
			if t < 0 {
				t, s = 0, clamp01(-c/a)
			} else if t > 1 {
				t, s = 1, clamp01((b-c)/a)
			}
		}
	}
	c1, c2 := p1.Add(d1.Scale(s)), p2.Add(d2.Scale(t))
	return c1.Sub(c2).Norm()
}

func clamp01(v float64) float64 {
	if v < 0 || v != v {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}
