package vesc

import (
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/can/cantest"
	"github.com/saint-os/saint/hal/clock"
)

func frame(id uint32, data string) can.Frame {
	b, err := hex.DecodeString(strings.ReplaceAll(data, " ", ""))
	if err != nil {
		panic(err)
	}
	f := can.Frame{ID: id, Extended: true, Length: uint8(len(b))}
	copy(f.Data[:], b)
	return f
}

// The frames below are worked out by hand from the table in the package
// doc (and PROTOCOLS.md's worked example), not produced by CommandFrame.
func TestCommandFrames(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   uint8
		send func(c *Controller) error
		want can.Frame
	}{
		{"worked example: 51 A to VESC 23", 23, func(c *Controller) error { return c.SetCurrent(51) }, frame(0x0117, "00 00 c7 38")},
		{"duty 0.5 to 68", 68, func(c *Controller) error { return c.SetDuty(0.5) }, frame(0x0044, "00 00 c3 50")},
		{"duty −0.25 to 56", 56, func(c *Controller) error { return c.SetDuty(-0.25) }, frame(0x0038, "ff ff 9e 58")},
		{"brake 10 A to 68", 68, func(c *Controller) error { return c.SetCurrentBrake(10) }, frame(0x0244, "00 00 27 10")},
		{"3000 ERPM to 56", 56, func(c *Controller) error { return c.SetRPM(3000) }, frame(0x0338, "00 00 0b b8")},
		{"−3000 ERPM to 56", 56, func(c *Controller) error { return c.SetRPM(-3000) }, frame(0x0338, "ff ff f4 48")},
		{"position 90° to 68", 68, func(c *Controller) error { return c.SetPos(90) }, frame(0x0444, "05 5d 4a 80")},
		{"broadcast release", Broadcast, func(c *Controller) error { return c.SetCurrent(0) }, frame(0x01FF, "00 00 00 00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := cantest.New(nil)
			c := New(bus, tc.id)
			if err := tc.send(c); err != nil {
				t.Fatal(err)
			}
			if s := bus.Sent(); len(s) != 1 || s[0] != tc.want {
				t.Errorf("sent %+v, want %+v", s, tc.want)
			}
		})
	}
}

func TestCommandRange(t *testing.T) {
	bus := cantest.New(nil)
	c := New(bus, 68)
	nan := math.NaN()
	for name, err := range map[string]error{
		"duty 1.5":      c.SetDuty(1.5),
		"duty NaN":      c.SetDuty(nan),
		"current 3e6 A": c.SetCurrent(3e6),
		"erpm 1e10":     c.SetRPM(1e10),
	} {
		if err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if len(bus.Sent()) != 0 {
		t.Errorf("rejected commands reached the bus: %v", bus.Sent())
	}
	busOff := errors.New("bus off")
	bus.Fail(busOff)
	if err := c.SetDuty(0.1); !errors.Is(err, busOff) {
		t.Errorf("SetDuty on a failed bus = %v, want %v", err, busOff)
	}
}

func TestTelemetryDecode(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	bus := cantest.New(clk)
	left, right := New(bus, 68), New(bus, 56)
	t0 := clk.Now()
	inject := func(f can.Frame, at time.Time) {
		if err := bus.Inject(f, at); err != nil {
			t.Fatal(err)
		}
	}
	inject(frame(0x0944, "ff ff d1 20 00 7b 01 c8"), t0)
	inject(frame(0x1038, "01 9f 02 28 ff de 23 28"), t0.Add(time.Millisecond))
	inject(frame(0x1B44, "00 01 e2 40 01 6e 00 00"), t0.Add(2*time.Millisecond))
	// Not telemetry: a short status, a standard frame, a remote frame.
	inject(frame(0x0944, "00 00"), t0)
	inject(can.Frame{ID: 0x044, Length: 8}, t0)
	inject(can.Frame{ID: 0x0944, Extended: true, Remote: true, Length: 8}, t0)

	l := left.Telemetry()
	want := Status{ERPM: -12000, Current: 12.3, Duty: 0.456, At: t0}
	if l.Status != want {
		t.Errorf("left STATUS = %+v, want %+v", l.Status, want)
	}
	if w := (Status5{Tachometer: 123456, InputVoltage: 36.6, At: t0.Add(2 * time.Millisecond)}); l.Status5 != w {
		t.Errorf("left STATUS_5 = %+v, want %+v", l.Status5, w)
	}
	if !l.Status4.At.IsZero() {
		t.Errorf("left has a STATUS_4 that was sent by 56: %+v", l.Status4)
	}
	r := right.Telemetry()
	if w := (Status4{TempFET: 41.5, TempMotor: 55.2, InputCurrent: -3.4, PIDPos: 180, At: t0.Add(time.Millisecond)}); r.Status4 != w {
		t.Errorf("right STATUS_4 = %+v, want %+v", r.Status4, w)
	}
	if !r.Status.At.IsZero() {
		t.Errorf("right took left's STATUS: %+v", r.Status)
	}
	left.Close()
	inject(frame(0x0944, "00 00 00 01 00 00 00 00"), t0)
	if left.Telemetry().Status.ERPM != -12000 {
		t.Error("closed controller still decodes")
	}
}

// The encoders the twin uses give back the golden frames.
func TestStatusFrames(t *testing.T) {
	for _, tc := range []struct {
		got, want can.Frame
	}{
		{Status{ERPM: -12000, Current: 12.3, Duty: 0.456}.Frame(68), frame(0x0944, "ff ff d1 20 00 7b 01 c8")},
		{Status4{TempFET: 41.5, TempMotor: 55.2, InputCurrent: -3.4, PIDPos: 180}.Frame(56), frame(0x1038, "01 9f 02 28 ff de 23 28")},
		{Status5{Tachometer: 123456, InputVoltage: 36.6}.Frame(68), frame(0x1B44, "00 01 e2 40 01 6e 00 00")},
		// Saturation, not wrap-around, for values a field cannot hold.
		{Status{ERPM: 1e12, Current: 5000, Duty: -40}.Frame(1), frame(0x0901, "7f ff ff ff 7f ff 80 00")},
	} {
		if tc.got != tc.want {
			t.Errorf("frame %+v, want %+v", tc.got, tc.want)
		}
	}
}

// FuzzTelemetry feeds arbitrary frames to the decoder: it never panics and
// takes only status frames for its id.
func FuzzTelemetry(f *testing.F) {
	f.Add(uint32(0x0944), true, false, uint8(8), []byte{0xff, 0xff, 0xd1, 0x20, 0, 0x7b, 1, 0xc8})
	f.Add(uint32(0x1B44), true, false, uint8(3), []byte{1, 2, 3})
	f.Add(uint32(0x44), false, true, uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, id uint32, ext, remote bool, n uint8, data []byte) {
		fr := can.Frame{ID: id, Extended: ext, Remote: remote, Length: n}
		copy(fr.Data[:], data)
		tel := Telemetry{ID: 68}
		if tel.Update(fr, time.Time{}) {
			cmd, cid := SplitID(id)
			if cid != 68 || !ext || n != 8 || (cmd != CmdStatus && cmd != CmdStatus4 && cmd != CmdStatus5) {
				t.Fatalf("took %+v", fr)
			}
		}
	})
}

func BenchmarkStatusDecode(b *testing.B) {
	fs := []can.Frame{
		frame(0x0944, "ff ff d1 20 00 7b 01 c8"),
		frame(0x1044, "01 9f 02 28 ff de 23 28"),
		frame(0x1B44, "00 01 e2 40 01 6e 00 00"),
	}
	tel := Telemetry{ID: 68}
	at := clock.Epoch()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !tel.Update(fs[i%3], at) {
			b.Fatal("not decoded")
		}
		i++
	}
}
