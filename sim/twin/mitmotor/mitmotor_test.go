package mitmotor_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/can/cantest"
	drv "github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/twin/mitmotor"
)

func run(t testing.TB, ex *executor.Executor, d time.Duration) {
	t.Helper()
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

type rig struct {
	ex    *executor.Executor
	bus   *cantest.Bus
	twin  *mitmotor.Device
	motor *drv.Motor
}

func newRig(t *testing.T, o mitmotor.Options) rig {
	t.Helper()
	ex := executor.NewVirtual()
	bus := cantest.New(ex.Clock())
	d, err := mitmotor.New(bus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := drv.New(bus, o.ID, d.Model(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(); m.Close() })
	return rig{ex, bus, d, m}
}

// The torque the twin applies is the law on the values the wire carried,
// computed here from the driver's side: kp·(p_des − p) + kd·(v_des − v) +
// τ_ff, clamped to the model's torque range.
func TestTorqueLaw(t *testing.T) {
	r := newRig(t, mitmotor.Options{ID: 2})
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	mo := r.twin.Model()
	for _, tc := range []struct {
		name string
		c    drv.Command
		p, v float64
		want float64
	}{
		{"position", drv.Command{Position: 0.5, Kp: 20, Kd: 1}, 0.2, 0.3, 20*(0.5-0.2) + 1*(0-0.3)},
		{"torque only", drv.Command{Torque: -3.5}, 1.1, -2, -3.5},
		{"mixed", drv.Command{Position: -1, Velocity: 2, Kp: 5, Kd: 0.5, Torque: 1.5}, -0.5, 1, 5*(-1+0.5) + 0.5*(2-1) + 1.5},
		{"clamped", drv.Command{Position: 10, Kp: 400}, 0, 0, mo.Torque.Max},
		{"clamped below", drv.Command{Position: -10, Kp: 400, Torque: -18}, 0, 0, mo.Torque.Min},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.twin.SetState(tc.p, tc.v)
			if err := r.motor.Command(tc.c); err != nil {
				t.Fatal(err)
			}
			run(t, r.ex, 2*time.Millisecond)
			// Each field is quantised: allow one step of each, weighted by
			// what multiplies it.
			tol := 20*(25.0/65535) + 1*(130.0/4095)*(tc.c.Kd+1) + 500.0/4095*math.Abs(tc.p) + 5.0/4095*math.Abs(tc.v) + 36.0/4095
			if got := r.twin.Torque(); math.Abs(got-tc.want) > tol {
				t.Errorf("torque %.4f N·m, want %.4f ± %.4f", got, tc.want, tol)
			}
		})
	}
}

func TestEnableDisableAndReplies(t *testing.T) {
	r := newRig(t, mitmotor.Options{ID: 4})
	r.twin.SetState(0.25, -1.5)
	// Not enabled: the command is answered, not applied.
	if err := r.motor.Command(drv.Command{Torque: 5}); err != nil {
		t.Fatal(err)
	}
	run(t, r.ex, 2*time.Millisecond)
	if r.twin.Torque() != 0 || r.twin.Commands() != 0 {
		t.Errorf("disabled actuator applies %v N·m after %d commands", r.twin.Torque(), r.twin.Commands())
	}
	rep, at, n := r.motor.Reply()
	if n != 1 || at.IsZero() || rep.ID != 4 || math.Abs(rep.Position-0.25) > 1e-3 || math.Abs(rep.Velocity+1.5) > 0.04 {
		t.Errorf("reply %+v (%d), want 0.25 rad, −1.5 rad/s", rep, n)
	}
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := r.motor.Command(drv.Command{Torque: 5}); err != nil {
		t.Fatal(err)
	}
	run(t, r.ex, 2*time.Millisecond)
	if got := r.twin.Torque(); math.Abs(got-5) > 0.01 {
		t.Errorf("enabled: torque %v, want 5", got)
	}
	// The next reply reports the torque applied.
	if err := r.motor.Command(drv.Command{Torque: 5}); err != nil {
		t.Fatal(err)
	}
	if rep, _, _ := r.motor.Reply(); math.Abs(rep.Torque-5) > 0.01 {
		t.Errorf("reply torque %v, want 5", rep.Torque)
	}
	if err := r.motor.Disable(); err != nil {
		t.Fatal(err)
	}
	run(t, r.ex, 2*time.Millisecond)
	if r.twin.Torque() != 0 || r.twin.Enabled() {
		t.Errorf("after disable: %v N·m, enabled %v", r.twin.Torque(), r.twin.Enabled())
	}
	// Off the bus: nothing answers.
	r.twin.SetConnected(false)
	_, _, before := r.motor.Reply()
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	if _, _, after := r.motor.Reply(); after != before || r.twin.Enabled() {
		t.Errorf("a disconnected actuator answered or obeyed")
	}
}

func TestZero(t *testing.T) {
	r := newRig(t, mitmotor.Options{ID: 1})
	r.twin.SetState(1.2, 0)
	if err := r.motor.Zero(); err != nil {
		t.Fatal(err)
	}
	if rep, _, _ := r.motor.Reply(); math.Abs(rep.Position) > 1e-3 {
		t.Errorf("after zero the actuator reports %v rad", rep.Position)
	}
	// The law measures from the new zero: holding p_des = 0 at the
	// physical 1.2 rad takes no torque, 1.3 rad pulls back.
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := r.motor.Command(drv.Command{Kp: 10}); err != nil {
		t.Fatal(err)
	}
	r.twin.SetState(1.3, 0)
	run(t, r.ex, 2*time.Millisecond)
	if got := r.twin.Torque(); math.Abs(got+1) > 0.02 {
		t.Errorf("torque %v at 0.1 rad past the new zero, want −1", got)
	}
}

func TestTimeout(t *testing.T) {
	r := newRig(t, mitmotor.Options{ID: 1, Timeout: 100 * time.Millisecond})
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := r.motor.Command(drv.Command{Torque: 2}); err != nil {
		t.Fatal(err)
	}
	run(t, r.ex, 50*time.Millisecond)
	if got := r.twin.Torque(); math.Abs(got-2) > 0.01 {
		t.Fatalf("torque %v before the timeout", got)
	}
	run(t, r.ex, 60*time.Millisecond)
	if got := r.twin.Torque(); got != 0 {
		t.Errorf("torque %v after the timeout, want 0", got)
	}
}

// A joint on the actuator, a rod of inertia J hanging under gravity:
// holding it out with MIXED-style gains and a feed-forward settles where
// kp·(p_des − p) + τ_ff balances gravity.
func TestHoldsAJoint(t *testing.T) {
	r := newRig(t, mitmotor.Options{ID: 3})
	const j, mgl = 0.05, 2.0 // kg·m², N·m at horizontal
	var theta, omega float64
	r.ex.Every(time.Millisecond, func() {
		const dt = 1e-3
		tau := r.twin.Torque() - mgl*math.Cos(theta)
		omega += tau / j * dt
		theta += omega * dt
		r.twin.SetState(theta, omega)
	})
	if err := r.motor.Enable(); err != nil {
		t.Fatal(err)
	}
	c := drv.Command{Position: 0.5, Kp: 40, Kd: 1, Torque: 1}
	r.ex.Every(5*time.Millisecond, func() { _ = r.motor.Command(c) })
	run(t, r.ex, 3*time.Second)
	// Equilibrium: 40·(0.5 − θ) + 1 = 2·cos θ.
	lo, hi := 0.0, 1.0
	for range 60 {
		m := (lo + hi) / 2
		if 40*(0.5-m)+1-2*math.Cos(m) > 0 {
			lo = m
		} else {
			hi = m
		}
	}
	if math.Abs(theta-lo) > 2e-3 || math.Abs(omega) > 1e-3 {
		t.Errorf("settled at %.4f rad (%.4f rad/s), want %.4f", theta, omega, lo)
	}
}

// BenchmarkCommandRoundTrip: one command from the driver, through the
// loopback bus, decoded by the twin, its reply encoded and decoded back
// into the driver's latest reply.
func BenchmarkCommandRoundTrip(b *testing.B) {
	ex := executor.NewVirtual()
	bus := &loopback{}
	d, err := mitmotor.New(bus, ex, mitmotor.Options{ID: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	m, err := drv.New(bus, 1, d.Model(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	_ = m.Enable()
	c := drv.Command{Position: 0.5, Kp: 20, Kd: 1}
	for b.Loop() {
		if err := m.Command(c); err != nil {
			b.Fatal(err)
		}
	}
}

// loopback is a CAN bus that keeps no record (cantest.Bus records every
// frame), for benchmarks.
type loopback struct{ rx []func(can.Frame, time.Time) }

func (l *loopback) Send(f can.Frame) error {
	for _, fn := range l.rx {
		fn(f, time.Time{})
	}
	return nil
}

func (l *loopback) Receive(fn func(can.Frame, time.Time)) func() {
	l.rx = append(l.rx, fn)
	return func() {}
}
