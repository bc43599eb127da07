package vesc_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/can/cantest"
	drv "github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/twin/vesc"
)

func run(t testing.TB, ex *executor.Executor, d time.Duration) {
	t.Helper()
	if err := ex.RunFor(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

func TestCommands(t *testing.T) {
	ex := executor.NewVirtual()
	bus := cantest.New(ex.Clock())
	left := vesc.New(bus, ex, vesc.Options{ID: 68})
	right := vesc.New(bus, ex, vesc.Options{ID: 56})
	cl, cr := drv.New(bus, 68), drv.New(bus, 56)
	const tol = 1e-9
	for _, tc := range []struct {
		send func() error
		want vesc.Command
	}{
		{func() error { return cl.SetDuty(0.25) }, vesc.Command{Mode: vesc.Duty, Value: 0.25}},
		{func() error { return cl.SetDuty(-1) }, vesc.Command{Mode: vesc.Duty, Value: -0.95}}, // the firmware's max duty
		{func() error { return cl.SetCurrent(51) }, vesc.Command{Mode: vesc.Current, Value: 51}},
		{func() error { return cl.SetCurrent(0) }, vesc.Command{Mode: vesc.Off}},
		{func() error { return cl.SetCurrentBrake(-12.5) }, vesc.Command{Mode: vesc.Brake, Value: 12.5}},
		{func() error { return cl.SetRPM(-4200) }, vesc.Command{Mode: vesc.RPM, Value: -4200}},
		{func() error { return cl.SetPos(123.456) }, vesc.Command{Mode: vesc.Pos, Value: 123.456}},
	} {
		run(t, ex, 10*time.Millisecond)
		now := ex.Now()
		if err := tc.send(); err != nil {
			t.Fatal(err)
		}
		got := left.Command()
		if got.Mode != tc.want.Mode || math.Abs(got.Value-tc.want.Value) > tol || !got.At.Equal(now) {
			t.Errorf("command %+v, want %+v at %v", got, tc.want, now)
		}
	}
	if got := right.Command(); got.Mode != vesc.Off {
		t.Errorf("VESC 56 obeyed commands for 68: %+v", got)
	}
	if err := cr.SetRPM(1000); err != nil {
		t.Fatal(err)
	}
	if got := left.Command(); got.Mode != vesc.Pos {
		t.Errorf("VESC 68 obeyed a command for 56: %+v", got)
	}
	// Broadcast reaches both.
	all := drv.New(bus, drv.Broadcast)
	if err := all.SetCurrentBrake(3); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*vesc.Device{left, right} {
		if c := d.Command(); c.Mode != vesc.Brake || c.Value != 3 {
			t.Errorf("VESC %d after broadcast brake: %+v", d.ID(), c)
		}
	}
}

func TestMalformedIgnored(t *testing.T) {
	ex := executor.NewVirtual()
	bus := cantest.New(ex.Clock())
	v := vesc.New(bus, ex, vesc.Options{ID: 68})
	if err := drv.New(bus, 68).SetRPM(500); err != nil {
		t.Fatal(err)
	}
	want := v.Command()
	for _, f := range []can.Frame{
		{ID: 0x0344, Extended: true, Length: 3, Data: [8]byte{1, 2, 3}}, // short
		{ID: 0x0344, Extended: false, Length: 4},                        // standard frame
		{ID: 0x0344, Extended: true, Remote: true, Length: 4},           // remote frame
		{ID: 0x0545, Extended: true, Length: 4},                         // another controller
		{ID: 0x0744, Extended: true, Length: 4},                         // command 7, not one it obeys
		{ID: 0x10344, Extended: true, Length: 4},                        // not a VESC id
	} {
		if err := bus.Inject(f, ex.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if got := v.Command(); got != want {
		t.Errorf("command %+v after malformed frames, want %+v", got, want)
	}
	if v.Ignored() != 2 {
		t.Errorf("Ignored() = %d, want 2 (the short frame and the unknown command)", v.Ignored())
	}
}

func TestStatusBroadcast(t *testing.T) {
	ex := executor.NewVirtual()
	bus := cantest.New(ex.Clock())
	v := vesc.New(bus, ex, vesc.Options{ID: 56, StatusPeriod: 10 * time.Millisecond})
	c := drv.New(bus, 56)
	st := vesc.State{ERPM: -8123, MotorCurrent: 14.2, Duty: -0.31, InputCurrent: 4.1, InputVoltage: 35.7,
		TempFET: 38.3, TempMotor: 47.9, Tachometer: -99123, PIDPos: 271.5}
	v.SetState(st)
	t0 := ex.Now()
	run(t, ex, 100*time.Millisecond)
	counts := map[uint32]int{}
	for _, f := range bus.Sent() {
		counts[f.ID]++
	}
	for _, id := range []uint32{0x0938, 0x1038, 0x1B38} {
		if counts[id] != 10 {
			t.Errorf("frame %#x sent %d times in 100 ms at 100 Hz, want 10", id, counts[id])
		}
	}
	tel := c.Telemetry()
	const tol = 1e-9
	for _, x := range []struct {
		name      string
		got, want float64
	}{
		{"erpm", tel.Status.ERPM, -8123}, {"current", tel.Status.Current, 14.2}, {"duty", tel.Status.Duty, -0.31},
		{"fet", tel.Status4.TempFET, 38.3}, {"motor temp", tel.Status4.TempMotor, 47.9},
		{"input current", tel.Status4.InputCurrent, 4.1}, {"pid pos", tel.Status4.PIDPos, 271.5},
		{"vin", tel.Status5.InputVoltage, 35.7}, {"tach", float64(tel.Status5.Tachometer), -99123},
	} {
		if math.Abs(x.got-x.want) > tol {
			t.Errorf("%s = %v, want %v", x.name, x.got, x.want)
		}
	}
	if want := t0.Add(100 * time.Millisecond); !tel.Status.At.Equal(want) {
		t.Errorf("last STATUS at %v, want %v", tel.Status.At, want)
	}
	v.SetConnected(false)
	n := len(bus.Sent())
	run(t, ex, 100*time.Millisecond)
	if len(bus.Sent()) != n {
		t.Error("a disconnected VESC kept sending")
	}
	v.Close()
}

func TestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		brake float64
		want  vesc.Command
	}{
		{"release", 0, vesc.Command{Mode: vesc.Off}},
		{"brake", 5, vesc.Command{Mode: vesc.Brake, Value: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := executor.NewVirtual()
			bus := cantest.New(ex.Clock())
			v := vesc.New(bus, ex, vesc.Options{ID: 68, Timeout: 500 * time.Millisecond, TimeoutBrakeCurrent: tc.brake})
			c := drv.New(bus, 68)
			if err := c.SetDuty(0.4); err != nil {
				t.Fatal(err)
			}
			run(t, ex, 400*time.Millisecond)
			if err := c.SetDuty(0.5); err != nil { // renews the timeout
				t.Fatal(err)
			}
			renewed := ex.Now()
			run(t, ex, 499*time.Millisecond)
			if got := v.Command(); got.Mode != vesc.Duty || got.Value != 0.5 {
				t.Fatalf("command %+v 499 ms after the last one, want duty 0.5", got)
			}
			run(t, ex, time.Millisecond)
			got := v.Command()
			if got.Mode != tc.want.Mode || got.Value != tc.want.Value || !got.At.Equal(renewed.Add(500*time.Millisecond)) {
				t.Errorf("after the timeout: %+v, want %+v at %v", got, tc.want, renewed.Add(500*time.Millisecond))
			}
		})
	}
}

// FuzzVESC puts arbitrary frames on the bus: the twin never panics, and a
// frame not addressed to it never changes its command.
func FuzzVESC(f *testing.F) {
	f.Add(uint32(0x0044), true, false, uint8(4), []byte{0, 0, 0xc3, 0x50})
	f.Add(uint32(0x01FF), true, false, uint8(8), []byte{0x80, 0, 0, 0, 1, 2, 3, 4})
	f.Add(uint32(0x0344), true, false, uint8(2), []byte{1, 2})
	f.Add(uint32(0x0444), false, false, uint8(4), []byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, id uint32, ext, remote bool, n uint8, data []byte) {
		ex := executor.NewVirtual()
		bus := cantest.New(ex.Clock())
		v := vesc.New(bus, ex, vesc.Options{ID: 68})
		fr := can.Frame{ID: id, Extended: ext, Remote: remote, Length: n}
		copy(fr.Data[:], data)
		before := v.Command()
		if bus.Inject(fr, ex.Now()) != nil {
			return // not a frame a controller would put on the wire
		}
		after := v.Command()
		_, cid := drv.SplitID(id)
		addressed := ext && !remote && id>>16 == 0 && (cid == 68 || cid == drv.Broadcast)
		if after != before && !addressed {
			t.Fatalf("frame %+v changed the command to %+v", fr, after)
		}
		if math.IsNaN(after.Value) || math.IsInf(after.Value, 0) {
			t.Fatalf("command value %v", after.Value)
		}
		run(t, ex, 50*time.Millisecond)
	})
}
