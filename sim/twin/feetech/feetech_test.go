package feetech_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	ft "github.com/saint-os/saint/hal/device/feetech"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/feetech"
)

// rig is a driver on one end of a line and a twin bus on the other.
type rig struct {
	ex     *executor.Executor
	driver *ft.Bus
	twin   *feetech.Bus
	host   *uarttest.Port
	dev    *uarttest.Port
}

func newRig(t testing.TB, model ft.Model, ids ...uint8) *rig {
	t.Helper()
	ex := executor.NewVirtual()
	host, dev := uarttest.Pipe(ex.Clock())
	tw := feetech.New(dev, &feetech.Options{Model: model})
	for _, id := range ids {
		if _, err := tw.Add(id); err != nil {
			t.Fatal(err)
		}
	}
	d, err := ft.New(host, ex, &ft.Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{ex: ex, driver: d, twin: tw, host: host, dev: dev}
}

func (r *rig) run(t testing.TB) {
	t.Helper()
	if err := r.ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Error(err)
		}
	}
}

func TestDriverAgainstTwin(t *testing.T) {
	for _, model := range []ft.Model{ft.STS, ft.SCS} {
		t.Run(model.String(), func(t *testing.T) {
			r := newRig(t, model, 1, 2, 7)
			r.driver.Ping(7, must(t))
			target := model.Steps(0.5)
			r.driver.SetGoal(ft.Goal{ID: 1, Position: target, Speed: 800}, must(t))
			r.driver.SyncGoals([]ft.Goal{{ID: 2, Position: 100, Speed: 50}, {ID: 7, Position: 900, Speed: 60}}, must(t))
			r.run(t)
			if g := r.twin.Servo(1).Goal(); g.Position != target || g.Speed != 800 || !g.Torque {
				t.Errorf("servo 1 goal %+v, want position %d speed 800 with torque", g, target)
			}
			if g := r.twin.Servo(7).Goal(); g.Position != 900 || g.Speed != 60 {
				t.Errorf("servo 7 goal %+v after sync write", g)
			}

			want := ft.Present{Position: 600, Speed: -321, Load: 455, Voltage: 11.9, Temperature: 44, Moving: true}
			r.twin.Servo(2).SetPresent(want)
			var got ft.Present
			r.driver.ReadPresent(2, func(p ft.Present, err error) {
				if err != nil {
					t.Error(err)
				}
				got = p
			})
			r.run(t)
			if got.At.IsZero() {
				t.Error("present has no arrival time")
			}
			got.At = time.Time{}
			if got != want {
				t.Errorf("ReadPresent = %+v, want %+v", got, want)
			}

			// Torque off by REG_WRITE, applied by a broadcast ACTION.
			r.driver.RegWrite(1, ft.RegTorqueEnable, []byte{0}, must(t))
			r.run(t)
			if !r.twin.Servo(1).Goal().Torque {
				t.Error("REG_WRITE applied before ACTION")
			}
			r.driver.Action(ft.Broadcast, must(t))
			r.run(t)
			if r.twin.Servo(1).Goal().Torque {
				t.Error("ACTION did not apply the armed write")
			}

			// A servo's fault comes back with its data.
			r.twin.Servo(7).SetError(ft.ErrOverheat)
			var se *ft.StatusError
			var data []byte
			r.driver.ReadRegister(7, ft.RegID, 1, func(d []byte, _ time.Time, err error) { data = d; errors.As(err, &se) })
			r.run(t)
			if se == nil || se.Bits != ft.ErrOverheat || !bytes.Equal(data, []byte{7}) {
				t.Errorf("read from faulty servo: data % X, error %v", data, se)
			}
		})
	}
}

func TestSyncReadSTS(t *testing.T) {
	r := newRig(t, ft.STS, 1, 2, 3)
	r.twin.Servo(1).SetPresent(ft.Present{Position: 10})
	r.twin.Servo(3).SetPresent(ft.Present{Position: 4000})
	var got [][]byte
	r.driver.SyncRead([]uint8{3, 1}, ft.RegPresentPosition, 2, func(d [][]byte, _ time.Time, err error) {
		if err != nil {
			t.Error(err)
		}
		got = d
	})
	r.run(t)
	if len(got) != 2 || ft.STS.Get16(got[0]) != 4000 || ft.STS.Get16(got[1]) != 10 {
		t.Errorf("sync read = % X, want servo 3 then servo 1", got)
	}
}

func TestUnpluggedServoTimesOut(t *testing.T) {
	r := newRig(t, ft.STS, 1, 2)
	r.twin.Servo(2).SetConnected(false)
	var errs []error
	r.driver.Ping(2, func(err error) { errs = append(errs, err) })
	r.driver.Ping(1, func(err error) { errs = append(errs, err) }) // queued behind the silent one
	r.run(t)
	if len(errs) != 2 || !errors.Is(errs[0], ft.ErrTimeout) || errs[1] != nil {
		t.Errorf("errors %v, want timeout then success", errs)
	}
}

// What the twin puts on the wire for each request, byte for byte.
func TestTwinAnswers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      string
		want     string
		setLevel byte
	}{
		{"ping", "FF FF 01 02 01 FB", "FF FF 01 02 00 FC", 1},
		{"broadcast ping: every servo in id order", "FF FF FE 02 01 FE", "FF FF 01 02 00 FC FF FF 02 02 00 FB", 1},
		{"read position", "FF FF 01 04 02 38 02 BE", "FF FF 01 04 00 00 08 F2", 1},
		{"write answered", "FF FF 01 04 03 28 01 CE", "FF FF 01 02 00 FC", 1},
		{"write silent at return level 0", "FF FF 01 04 03 28 01 CE", "", 0},
		{"read still answered at level 0", "FF FF 01 04 02 38 02 BE", "FF FF 01 04 00 00 08 F2", 0},
		{"broadcast write silent", "FF FF FE 04 03 28 01 D1", "", 1},
		{"bad checksum ignored", "FF FF 01 02 01 FA", "", 1},
		{"absent id silent", "FF FF 09 02 01 F3", "", 1},
		{"unknown instruction ignored", "FF FF 01 02 09 F3", "", 1},
		{"garbage then a ping", "00 13 FF 77 FF FF FF 01 02 01 FB", "FF FF 01 02 00 FC", 1},
		{"read with one parameter ignored", "FF FF 01 03 02 38 C1", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, ft.STS, 1, 2)
			for _, id := range []uint8{1, 2} {
				// Return level 0 is set through the bus, as a real setup would.
				r.host.Write(ft.Packet{ID: id, Instr: ft.InstrWrite, Params: []byte{ft.RegStatusReturnLevel, tc.setLevel}}.Encode())
			}
			before := len(r.dev.Written())
			r.host.Write(hx(tc.req))
			got := r.dev.Written()[before:]
			if !bytes.Equal(got, hx(tc.want)) {
				t.Errorf("twin wrote % X, want %s", got, tc.want)
			}
		})
	}
}

func TestIDChange(t *testing.T) {
	r := newRig(t, ft.STS, 1)
	r.driver.WriteRegister(1, ft.RegID, []byte{9}, must(t))
	r.run(t)
	r.driver.Ping(9, must(t))
	r.run(t)
	if r.twin.Servo(9) == nil || r.twin.Servo(1) != nil {
		t.Error("servo did not take id 9")
	}
	goals, found := make([]feetech.Goal, 2), make([]bool, 2)
	r.twin.Goals([]uint8{1, 9}, goals, found)
	if found[0] || !found[1] || goals[1] != r.twin.Servo(9).Goal() {
		t.Errorf("Goals for ids 1 and 9 after the change: found %v, goal %+v", found, goals[1])
	}
	if _, err := r.twin.Add(9); err == nil {
		t.Error("Add accepted a duplicate id")
	}
	if _, err := r.twin.Add(ft.Broadcast); err == nil {
		t.Error("Add accepted the broadcast id")
	}
}

func TestGoalClampedToAngleLimits(t *testing.T) {
	r := newRig(t, ft.STS, 1)
	lim := make([]byte, 4)
	ft.STS.Put16(lim[0:], 1000)
	ft.STS.Put16(lim[2:], 3000)
	r.driver.WriteRegister(1, ft.RegMinAngleLimit, lim, must(t))
	r.driver.SetGoal(ft.Goal{ID: 1, Position: 3500}, must(t))
	r.run(t)
	if g := r.twin.Servo(1).Goal(); g.Position != 3000 {
		t.Errorf("goal %d, want 3000 (the max angle limit)", g.Position)
	}
}

// The goal's torque limit is the lower of the maximum torque (EPROM) and
// the run-time limit (RAM), both 1000 at power-on.
func TestGoalTorqueLimit(t *testing.T) {
	r := newRig(t, ft.STS, 1)
	if g := r.twin.Servo(1).Goal(); g.TorqueLimit != 1000 {
		t.Fatalf("power-on torque limit %d, want 1000", g.TorqueLimit)
	}
	v := make([]byte, 2)
	ft.STS.Put16(v, 400)
	r.driver.WriteRegister(1, feetech.RegTorqueLimit, v, must(t))
	r.run(t)
	if g := r.twin.Servo(1).Goal(); g.TorqueLimit != 400 {
		t.Errorf("run-time limit 400: torque limit %d", g.TorqueLimit)
	}
	ft.STS.Put16(v, 250)
	r.driver.WriteRegister(1, ft.RegMaxTorque, v, must(t))
	r.run(t)
	if g := r.twin.Servo(1).Goal(); g.TorqueLimit != 250 {
		t.Errorf("maximum 250 under a run-time limit of 400: torque limit %d", g.TorqueLimit)
	}
}

// FuzzTwin feeds arbitrary bytes to the twin: it must never panic, and
// whatever it answers must be well-formed status packets.
func FuzzTwin(f *testing.F) {
	f.Add(hx("FF FF 01 02 01 FB"))
	f.Add(hx("FF FF FE 06 82 38 02 01 02 3C"))
	f.Add(hx("FF FF FE 12 83 2A 06 01 00 08 00 00 E8 03 02 00 04 00 00 F4 01 4D"))
	f.Add(hx("FF FF 01 05 03 FE 01 02 F5"))
	f.Add(hx("FF FF 01 04 02 FF 05 F4"))
	f.Add([]byte{0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newRig(t, ft.STS, 1, 2)
		r.host.Write(in)
		out := r.dev.Written()
		var ps ft.Parser
		n := 0
		ps.Feed(out, func(ft.Packet) { n++ })
		if ps.Dropped != 0 || ps.BadChecksums != 0 {
			t.Fatalf("twin wrote malformed bytes % X", out)
		}
	})
}

func BenchmarkReadPresentRoundTrip(b *testing.B) {
	r := newRig(b, ft.STS, 1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ok := false
		r.driver.ReadPresent(1, func(_ ft.Present, err error) { ok = err == nil })
		if err := r.ex.RunFor(ctx, 0); err != nil || !ok {
			b.Fatal("read did not complete", err)
		}
	}
}

func hx(s string) []byte {
	var b []byte
	for i := 0; i+1 < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		var v byte
		for _, c := range s[i : i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'A' && c <= 'F':
				v |= byte(c-'A') + 10
			}
		}
		b = append(b, v)
		i += 2
	}
	return b
}

// A corrupt length byte makes the servos wait for a long packet; the
// driver's next try, after its timeout, is heard again.
func TestRecoversFromCorruptLength(t *testing.T) {
	r := newRig(t, ft.STS, 1)
	r.host.Write(hx("FF FF 01 F0 02")) // claims 240 more bytes
	var errs []error
	r.driver.Ping(1, func(err error) { errs = append(errs, err) })
	r.run(t)
	r.driver.Ping(1, func(err error) { errs = append(errs, err) })
	r.run(t)
	if len(errs) != 2 || !errors.Is(errs[0], ft.ErrTimeout) || errs[1] != nil {
		t.Errorf("errors %v, want a timeout, then an answer", errs)
	}
}
