package rigid

import (
	"math"
	"testing"

	"github.com/saint-os/saint/sim/model/geom"
)

const g0 = 9.80665

// rod is a thin rod of mass m and length l along the body's x axis,
// hinged about y at its start.
func rod(offset geom.Vec3, m, l float64) Joint {
	i := m * l * l / 12
	return Joint{Offset: offset, Axis: geom.Vec3{0, 1, 0}, Mass: m, COM: geom.Vec3{l / 2, 0, 0},
		Inertia: geom.Mat3{{1e-9, 0, 0}, {0, i, 0}, {0, 0, i}}}
}

// TestDoublePendulum checks M and the bias against the closed form of a
// planar double pendulum of rods (x forward, gravity −z, rotation about y
// turns +x towards −z).
func TestDoublePendulum(t *testing.T) {
	m1, l1, m2, l2 := 1.5, 0.4, 0.7, 0.3
	c := New(geom.Vec3{0.1, 0.2, 0.3}, geom.Vec3{0, 0, -g0}, []Joint{rod(geom.Vec3{}, m1, l1), rod(geom.Vec3{l1, 0, 0}, m2, l2)})
	for _, st := range [][4]float64{{0.3, -0.7, 1.2, -0.5}, {-1.1, 2.0, -0.4, 3.0}, {0, 0, 0, 0}} {
		q1, q2, w1, w2 := st[0], st[1], st[2], st[3]
		c.Update([]float64{q1, q2}, []float64{w1, w2})
		i1, i2 := m1*l1*l1/12, m2*l2*l2/12
		r1, r2 := l1/2, l2/2
		m11 := i1 + m1*r1*r1 + i2 + m2*(l1*l1+r2*r2+2*l1*r2*math.Cos(q2))
		m12 := i2 + m2*(r2*r2+l1*r2*math.Cos(q2))
		m22 := i2 + m2*r2*r2
		hh := m2 * l1 * r2 * math.Sin(q2)
		// Angles measured from +x turning towards −z: heights −r·sin q.
		g1 := -(m1*r1+m2*l1)*g0*math.Cos(q1) - m2*r2*g0*math.Cos(q1+q2)
		g2 := -m2 * r2 * g0 * math.Cos(q1+q2)
		b1 := -hh*(2*w1*w2+w2*w2) + g1
		b2 := hh*w1*w1 + g2
		m := c.MassMatrix()
		for _, x := range []struct{ got, want float64 }{
			{m.At(0, 0), m11}, {m.At(0, 1), m12}, {m.At(1, 0), m12}, {m.At(1, 1), m22},
			{c.Bias()[0], b1}, {c.Bias()[1], b2},
		} {
			if math.Abs(x.got-x.want) > 1e-12*math.Max(1, math.Abs(x.want)) {
				t.Errorf("state %v: got %.15g, want %.15g", st, x.got, x.want)
			}
		}
	}
}

// TestArmatureAndSolve: the armature adds to the diagonal only, and the
// accelerations satisfy M·q̈ = τ − bias.
func TestArmatureAndSolve(t *testing.T) {
	j := []Joint{rod(geom.Vec3{}, 1, 0.5), rod(geom.Vec3{0.5, 0, 0}, 1, 0.5)}
	plain := New(geom.Vec3{}, geom.Vec3{0, 0, -g0}, j)
	j[0].Armature, j[1].Armature = 0.2, 0.3
	geared := New(geom.Vec3{}, geom.Vec3{0, 0, -g0}, j)
	q, qd := []float64{0.4, 0.9}, []float64{1, -2}
	plain.Update(q, qd)
	geared.Update(q, qd)
	for a := 0; a < 2; a++ {
		for b := 0; b < 2; b++ {
			want := plain.MassMatrix().At(a, b)
			if a == b {
				want += []float64{0.2, 0.3}[a]
			}
			if got := geared.MassMatrix().At(a, b); math.Abs(got-want) > 1e-15 {
				t.Errorf("M[%d][%d] = %g, want %g", a, b, got, want)
			}
		}
	}
	tau := []float64{3, -1}
	qdd := make([]float64, 2)
	if err := geared.Accelerations(tau, qdd); err != nil {
		t.Fatal(err)
	}
	m := geared.MassMatrix()
	for a := 0; a < 2; a++ {
		lhs := m.At(a, 0)*qdd[0] + m.At(a, 1)*qdd[1] + geared.Bias()[a]
		if math.Abs(lhs-tau[a]) > 1e-12 {
			t.Errorf("row %d: M·q̈ + bias = %g, τ = %g", a, lhs, tau[a])
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		geared.Update(q, qd)
		_ = geared.Accelerations(tau, qdd)
	}); n != 0 {
		t.Errorf("Update and Accelerations allocate %v times, want 0", n)
	}
}

func TestSingular(t *testing.T) {
	c := New(geom.Vec3{}, geom.Vec3{}, []Joint{{Axis: geom.Vec3{0, 0, 1}}})
	c.Update([]float64{0}, []float64{0})
	if err := c.Accelerations([]float64{1}, make([]float64, 1)); err != ErrSingular {
		t.Fatalf("massless chain: err %v, want ErrSingular", err)
	}
}

// BenchmarkUpdate is one evaluation of a five-joint arm's dynamics: the
// kinematics, CRBA, RNEA and the Cholesky solve.
func BenchmarkUpdate(b *testing.B) {
	j := make([]Joint, 5)
	for i := range j {
		j[i] = rod(geom.Vec3{0.2, 0, 0}, 0.3, 0.2)
		j[i].Armature = 4e-3
	}
	c := New(geom.Vec3{}, geom.Vec3{0, 0, -g0}, j)
	q, qd, tau, qdd := []float64{0.1, 0.2, 0.3, 0.4, 0.5}, []float64{1, -1, 0.5, 2, -2}, make([]float64, 5), make([]float64, 5)
	for i := 0; i < b.N; i++ {
		q[0] += 1e-9
		c.Update(q, qd)
		_ = c.Accelerations(tau, qdd)
	}
}

// Near says when UpdateNear keeps the last evaluation: only after an
// Update at rest, and only close to its pose and at rest still.
func TestNear(t *testing.T) {
	c := New(geom.Vec3{}, geom.Vec3{0, 0, -g0}, []Joint{rod(geom.Vec3{}, 1, 0.5), rod(geom.Vec3{0.5, 0, 0}, 1, 0.5)})
	q := []float64{0.4, 0.9}
	c.Update(q, []float64{1, 0})
	if c.Near(q, []float64{0, 0}, 1e-5, 1e-3) {
		t.Error("near after an Update in motion")
	}
	c.UpdateNear(q, []float64{0, 0}, 1e-5, 1e-3)
	for _, x := range []struct {
		q, qd []float64
		want  bool
	}{
		{[]float64{0.4, 0.9}, []float64{0, 0}, true},
		{[]float64{0.4 + 5e-6, 0.9}, []float64{0, 5e-4}, true},
		{[]float64{0.4 + 2e-5, 0.9}, []float64{0, 0}, false},
		{[]float64{0.4, 0.9}, []float64{0, 2e-3}, false},
	} {
		if got := c.Near(x.q, x.qd, 1e-5, 1e-3); got != x.want {
			t.Errorf("Near(%v, %v) = %v, want %v", x.q, x.qd, got, x.want)
		}
	}
}
