package canmsg

import (
	"encoding/hex"
	"testing"

	"github.com/saint-os/saint/hal/can"
)

func data(f can.Frame) string { return hex.EncodeToString(f.Data[:f.Length]) }

// Golden payloads worked out from the table by hand (little-endian).
func TestGoldenFrames(t *testing.T) {
	cases := []struct {
		name string
		f    can.Frame
		id   uint32
		hex  string
	}{
		{"velocity", Velocity{SpeedMMPS: 1500, SteerMrad: -300}.Frame(), 0x300, "dc05d4fe"},
		{"pid kp ki", PIDGains{Kp: 30, Ki: 0.5, Kd: 1.25}.Frames()[0], 0x301, "0000f0410000003f"},
		{"pid kd", PIDGains{Kp: 30, Ki: 0.5, Kd: 1.25}.Frames()[1], 0x301, "0000a03f"},
		{"mode", ModeManual.Frame(), 0x302, "02"},
		{"config", Config{TiltLimitX100: 2500, MaxSpeedMMPS: 3000}.Frame(), 0x303, "c409b80b"},
		{"telemetry a", TelemetryA{PitchX100: -512, PIDOut: 1234, SpeedMMPS: -250, State: 1}.Frame(), 0x400, "00fed20406ff01"},
		{"telemetry b", TelemetryB{VESCLeftRPM: 1736, VESCRightRPM: -1736, BatteryMV: 37000, Faults: 5}.Frame(), 0x401, "c80638f9889005"},
	}
	for _, c := range cases {
		if c.f.ID != c.id || c.f.Extended || c.f.Remote {
			t.Errorf("%s: id 0x%x extended %v, want standard 0x%x", c.name, c.f.ID, c.f.Extended, c.id)
		}
		if got := data(c.f); got != c.hex {
			t.Errorf("%s: data %s, want %s", c.name, got, c.hex)
		}
	}
}

func mustFrame(t *testing.T, id uint32, h string) can.Frame {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	f := can.Frame{ID: id, Length: uint8(len(b))}
	copy(f.Data[:], b)
	return f
}

func TestGoldenDecode(t *testing.T) {
	v, err := ParseVelocity(mustFrame(t, 0x300, "dc05d4fe"))
	if err != nil || v != (Velocity{1500, -300}) {
		t.Errorf("velocity %+v %v", v, err)
	}
	m, err := ParseMode(mustFrame(t, 0x302, "03"))
	if err != nil || m != ModeEStop {
		t.Errorf("mode %v %v", m, err)
	}
	c, err := ParseConfig(mustFrame(t, 0x303, "c409b80b"))
	if err != nil || c != (Config{2500, 3000}) {
		t.Errorf("config %+v %v", c, err)
	}
	a, err := ParseTelemetryA(mustFrame(t, 0x400, "00fed20406ff01"))
	if err != nil || a != (TelemetryA{-512, 1234, -250, 1}) {
		t.Errorf("telemetry a %+v %v", a, err)
	}
	b, err := ParseTelemetryB(mustFrame(t, 0x401, "c80638f9889005"))
	if err != nil || b != (TelemetryB{1736, -1736, 37000, 5}) {
		t.Errorf("telemetry b %+v %v", b, err)
	}
	var asm PIDAssembler
	if _, done, err := asm.Add(mustFrame(t, 0x301, "0000f0410000003f")); done || err != nil {
		t.Fatalf("first pid frame: done %v err %v", done, err)
	}
	g, done, err := asm.Add(mustFrame(t, 0x301, "0000a03f"))
	if !done || err != nil || g != (PIDGains{30, 0.5, 1.25}) {
		t.Errorf("pid %+v done %v err %v", g, done, err)
	}
}

func TestRefusals(t *testing.T) {
	if _, err := ParseVelocity(mustFrame(t, 0x300, "dc05d4")); err == nil {
		t.Error("3-byte velocity accepted")
	}
	ext := mustFrame(t, 0x300, "dc05d4fe")
	ext.Extended = true
	if _, err := ParseVelocity(ext); err == nil {
		t.Error("extended 0x300 accepted (a VESC frame)")
	}
	if _, err := ParseMode(mustFrame(t, 0x302, "04")); err == nil {
		t.Error("mode 4 accepted")
	}
	var asm PIDAssembler
	if _, _, err := asm.Add(mustFrame(t, 0x301, "0000a03f")); err == nil {
		t.Error("Kd frame without Kp/Ki accepted")
	}
}
