package geom

import (
	"math"
	"testing"
)

func TestSegmentDistance(t *testing.T) {
	cases := []struct {
		name           string
		p1, q1, p2, q2 Vec3
		want           float64
	}{
		{"parallel", Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{1, 1, 0}, 1},
		{"crossing above", Vec3{-1, 0, 0}, Vec3{1, 0, 0}, Vec3{0, -1, 2}, Vec3{0, 1, 2}, 2},
		{"end to end", Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{4, 0, 0}, Vec3{5, 0, 0}, 3},
		{"point to segment", Vec3{0, 3, 0}, Vec3{0, 3, 0}, Vec3{-1, 0, 0}, Vec3{1, 0, 0}, 3},
		{"two points", Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{3, 4, 0}, Vec3{3, 4, 0}, 5},
		{"intersecting", Vec3{-1, 0, 0}, Vec3{1, 0, 0}, Vec3{0, -1, 0}, Vec3{0, 1, 0}, 0},
	}
	for _, c := range cases {
		if got := SegmentDistance(c.p1, c.q1, c.p2, c.q2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: distance %g, want %g", c.name, got, c.want)
		}
	}
}

func TestRotations(t *testing.T) {
	// A quarter turn about z takes x to y; about y takes z to x; about x takes y to z.
	near := func(a, b Vec3) bool { return a.Sub(b).Norm() < 1e-12 }
	if !near(RotZ(math.Pi/2).Apply(Vec3{1, 0, 0}), Vec3{0, 1, 0}) ||
		!near(RotY(math.Pi/2).Apply(Vec3{0, 0, 1}), Vec3{1, 0, 0}) ||
		!near(RotX(math.Pi/2).Apply(Vec3{0, 1, 0}), Vec3{0, 0, 1}) {
		t.Error("rotation directions")
	}
	m := RotZ(0.3).Mul(RotY(-0.7)).Mul(RotX(1.1))
	v := Vec3{0.2, -1, 3}
	if !near(m.ApplyT(m.Apply(v)), v) {
		t.Error("ApplyT is not the inverse of Apply")
	}
	if !near(m.Col(2), m.Apply(Vec3{0, 0, 1})) {
		t.Error("Col")
	}
	c := Capsule{Vec3{0, 0, 0.1}, Vec3{1, 0, 0.3}, 0.05}
	if c.BelowZ(0) || !c.BelowZ(0.06) || !c.Touches(Capsule{Vec3{0.5, 0.09, 0}, Vec3{0.5, 0.09, 1}, 0.05}) {
		t.Error("capsule tests")
	}
}

// The bounding-sphere shortcut never changes the answer.
func TestTouchesMatchesDistance(t *testing.T) {
	v := func(i int) Vec3 {
		f := float64(i)
		return Vec3{math.Sin(f * 1.3), math.Cos(f * 0.7), math.Sin(f*2.9) * 0.5}
	}
	for i := 0; i < 2000; i++ {
		c := Capsule{v(i), v(i + 1), 0.05 + 0.1*math.Abs(math.Sin(float64(i)))}
		d := Capsule{v(i + 2), v(3*i + 5), 0.1}
		want := SegmentDistance(c.A, c.B, d.A, d.B) < c.Radius+d.Radius
		if c.Touches(d) != want {
			t.Fatalf("%v and %v: Touches %v, distance says %v", c, d, !want, want)
		}
	}
}
