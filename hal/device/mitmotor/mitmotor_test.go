package mitmotor

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
	f := can.Frame{ID: id, Length: uint8(len(b))}
	copy(f.Data[:], b)
	return f
}

func model(t *testing.T, name string) Model {
	t.Helper()
	m, err := ModelNamed(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The frames below were packed by hand from the layout in the package doc
// (float_to_uint truncates: 12.5·65535/25 = 32767.5 → 7FFF).
func TestCommandFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model string
		id    uint8
		c     Command
		want  can.Frame
	}{
		{"all zero", "mini_cheetah", 1, Command{}, frame(1, "7f ff 7f f0 00 00 07 ff")},
		{"range ends", "mini_cheetah", 2, Command{Position: 12.5, Velocity: -65, Kp: 500, Kd: 5, Torque: -18}, frame(2, "ff ff 00 0f ff ff f0 00")},
		{"mid values", "mini_cheetah", 3, Command{Position: 1, Velocity: 2, Kp: 50, Kd: 1, Torque: 3}, frame(3, "8a 3c 83 e1 99 33 39 54")},
		{"AK70-10 ranges", "ak70_10", 0x7F, Command{Position: -1.5, Velocity: -3, Kp: 20, Kd: 0.5, Torque: -2}, frame(0x7F, "70 a3 78 40 a3 19 97 54")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := cantest.New(nil)
			m, err := New(bus, tc.id, model(t, tc.model), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.Command(tc.c); err != nil {
				t.Fatal(err)
			}
			if s := bus.Sent(); len(s) != 1 || s[0] != tc.want {
				t.Errorf("sent %+v, want %+v", s, tc.want)
			}
		})
	}
}

func TestSpecialFrames(t *testing.T) {
	bus := cantest.New(nil)
	m, err := New(bus, 5, model(t, "ak80_9"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, fn := range []func() error{m.Enable, m.Zero, m.Disable} {
		if err := fn(); err != nil {
			t.Fatal(err)
		}
	}
	want := []can.Frame{
		frame(5, "ff ff ff ff ff ff ff fc"),
		frame(5, "ff ff ff ff ff ff ff fe"),
		frame(5, "ff ff ff ff ff ff ff fd"),
	}
	got := bus.Sent()
	if len(got) != len(want) {
		t.Fatalf("sent %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d: %+v, want %+v", i, got[i], want[i])
		}
		code, ok := Special(got[i])
		if !ok || code != want[i].Data[7] {
			t.Errorf("Special(frame %d) = %#x, %v", i, code, ok)
		}
		if _, err := m.Model().DecodeCommand(got[i]); !errors.Is(err, ErrNotCommand) {
			t.Errorf("DecodeCommand(special %d): %v, want ErrNotCommand", i, err)
		}
	}
}

func TestCommandOutOfRange(t *testing.T) {
	bus := cantest.New(nil)
	m, err := New(bus, 1, model(t, "mini_cheetah"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, tc := range []struct {
		c    Command
		want string
	}{
		{Command{Position: 12.6}, "position 12.6 outside [-12.5, 12.5]"},
		{Command{Velocity: -66}, "velocity -66 outside"},
		{Command{Kp: -1}, "kp -1 outside [0, 500]"},
		{Command{Kd: 5.1}, "kd 5.1 outside [0, 5]"},
		{Command{Torque: math.NaN()}, "torque NaN outside"},
	} {
		err := m.Command(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "actuator 1 (mini_cheetah)") {
			t.Errorf("Command(%+v) = %v, want an error with %q", tc.c, err, tc.want)
		}
	}
	if n := len(bus.Sent()); n != 0 {
		t.Errorf("%d frames sent for refused commands", n)
	}
}

func TestReplies(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	bus := cantest.New(clk)
	mc := model(t, "mini_cheetah")
	m, err := New(bus, 3, mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, at, n := m.Reply(); !at.IsZero() || n != 0 {
		t.Fatalf("a reply before any frame: %v %d", at, n)
	}
	at := clk.Now().Add(time.Second)
	// Not ours: another actuator's reply, a command to actuator 3 (its id is
	// 3, not the host's), an extended frame, a short frame.
	for _, f := range []can.Frame{
		frame(0, "04 80 00 80 08 00"),
		frame(3, "03 80 00 80 08 00 00 00"),
		{ID: 0, Extended: true, Length: 6, Data: [8]byte{3}},
		frame(0, "03 80 00 80"),
	} {
		if err := bus.Inject(f, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, n := m.Reply(); n != 0 {
		t.Fatalf("%d replies taken from frames that are not actuator 3's", n)
	}
	// 8000 → 12.5·(2·32768/65535 − 1) ≈ 0.00019 rad; 800 → 65·(2·2048/4095 − 1)
	// ≈ 0.0159 rad/s; 999 → 18·(2·2457/4095 − 1) = 3.6 N·m.
	if err := bus.Inject(frame(0, "03 80 00 80 09 99"), at); err != nil {
		t.Fatal(err)
	}
	r, got, n := m.Reply()
	const tol = 1e-3
	if n != 1 || !got.Equal(at) || r.ID != 3 || math.Abs(r.Position-0.00019) > tol || math.Abs(r.Velocity-0.0159) > tol || math.Abs(r.Torque-3.6) > tol || r.Extended {
		t.Errorf("reply %+v at %v (%d), want 3: 0.00019 rad, 0.0159 rad/s, 3.6 N·m at %v", r, got, n, at)
	}
	// CubeMars' 8-byte reply: 65 → 25 °C, error 0.
	if err := bus.Inject(frame(0, "03 ff ff ff ff ff 41 02"), at); err != nil {
		t.Fatal(err)
	}
	r, _, _ = m.Reply()
	if !r.Extended || r.Temperature != 25 || r.Error != 2 || r.Position != 12.5 || r.Velocity != 65 || r.Torque != 18 {
		t.Errorf("extended reply %+v, want 12.5 rad, 65 rad/s, 18 N·m, 25 °C, error 2", r)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, mo := range Models() {
		for _, c := range []Command{
			{},
			{Position: -3.2, Velocity: 10, Kp: 120, Kd: 2.5, Torque: -4},
			{Position: mo.Position.Max, Velocity: mo.Velocity.Min, Kp: mo.Kp.Max, Kd: mo.Kd.Min, Torque: mo.Torque.Max},
		} {
			f, err := mo.EncodeCommand(1, c)
			if err != nil {
				t.Fatalf("%s: %v", mo.Name, err)
			}
			got, err := mo.DecodeCommand(f)
			if err != nil {
				t.Fatal(err)
			}
			// Truncation loses up to one step of each field.
			step := func(r Range, bits uint) float64 { return (r.Max - r.Min) / float64(uint32(1)<<bits-1) }
			for _, x := range []struct {
				name      string
				got, want float64
				tol       float64
			}{
				{"position", got.Position, c.Position, step(mo.Position, PositionBits)},
				{"velocity", got.Velocity, c.Velocity, step(mo.Velocity, VelocityBits)},
				{"kp", got.Kp, c.Kp, step(mo.Kp, KpBits)},
				{"kd", got.Kd, c.Kd, step(mo.Kd, KdBits)},
				{"torque", got.Torque, c.Torque, step(mo.Torque, TorqueBits)},
			} {
				if math.Abs(x.got-x.want) > x.tol*1.0001 {
					t.Errorf("%s %s: %v back as %v (step %v)", mo.Name, x.name, x.want, x.got, x.tol)
				}
			}
			rf := mo.ReplyFrame(DefaultHostID, Reply{ID: 9, Position: c.Position, Velocity: c.Velocity, Torque: c.Torque})
			r, err := mo.DecodeReply(rf)
			if err != nil || r.ID != 9 || math.Abs(r.Position-c.Position) > step(mo.Position, PositionBits)*1.0001 || math.Abs(r.Torque-c.Torque) > step(mo.Torque, TorqueBits)*1.0001 {
				t.Errorf("%s reply round trip: %+v %v for %+v", mo.Name, r, err, c)
			}
		}
	}
}

func TestModels(t *testing.T) {
	if _, err := ModelNamed("ak99"); err == nil || !strings.Contains(err.Error(), "known: [ak10_9 ak60_6") {
		t.Errorf("ModelNamed(ak99) = %v, want the known models listed", err)
	}
	for _, m := range Models() {
		if err := m.Validate(); err != nil {
			t.Error(err)
		}
	}
	bad := Model{Name: "x", Position: Range{1, 1}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "position range") {
		t.Errorf("Validate(empty range) = %v", err)
	}
	if _, err := New(cantest.New(nil), 1, bad, nil); err == nil {
		t.Error("New accepted an invalid model")
	}
	if _, err := New(cantest.New(nil), 0, Models()[0], nil); err == nil {
		t.Error("New accepted actuator id 0, the host's")
	}
}

func TestSendError(t *testing.T) {
	bus := cantest.New(nil)
	m, err := New(bus, 1, Models()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	bus.Fail(errors.New("bus-off"))
	if err := m.Enable(); err == nil || !strings.Contains(err.Error(), "actuator 1: bus-off") {
		t.Errorf("Enable on a failing bus = %v", err)
	}
}

func BenchmarkEncodeCommand(b *testing.B) {
	m, _ := ModelNamed("ak80_9")
	c := Command{Position: 1.2, Velocity: -3, Kp: 60, Kd: 1.5, Torque: 2}
	for b.Loop() {
		if _, err := m.EncodeCommand(3, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeReply(b *testing.B) {
	m, _ := ModelNamed("ak80_9")
	f := frame(0, "03 80 00 80 09 99")
	for b.Loop() {
		if _, err := m.DecodeReply(f); err != nil {
			b.Fatal(err)
		}
	}
}
