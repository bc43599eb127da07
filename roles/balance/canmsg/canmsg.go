package canmsg

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/saint-os/saint/hal/can"
)

// Frame identifiers.
const (
	IDVelocity   = 0x300
	IDPID        = 0x301
	IDMode       = 0x302
	IDConfig     = 0x303
	IDTelemetryA = 0x400
	IDTelemetryB = 0x401
)

// Mode is the 0x302 operating mode.
type Mode uint8

// Modes.
const (
	ModeOff     Mode = 0
	ModeBalance Mode = 1
	ModeManual  Mode = 2
	ModeEStop   Mode = 3
)

func (m Mode) String() string {
	switch m {
	case ModeOff:
		return "off"
	case ModeBalance:
		return "balance"
	case ModeManual:
		return "manual"
	case ModeEStop:
		return "estop"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Velocity (0x300): forward speed in mm/s and yaw rate in mrad/s
// (positive turns left).
type Velocity struct {
	SpeedMMPS int16
	SteerMrad int16
}

// PIDGains (0x301).
type PIDGains struct{ Kp, Ki, Kd float32 }

// Config (0x303): tilt cutoff in 0.01° and the top speed in mm/s.
type Config struct {
	TiltLimitX100 uint16
	MaxSpeedMMPS  uint16
}

// TelemetryA (0x400): pitch in 0.01°, PID output (motor current, 0.01 A),
// speed in mm/s and the state code.
type TelemetryA struct {
	PitchX100 int16
	PIDOut    int16
	SpeedMMPS int16
	State     uint8
}

// TelemetryB (0x401): the VESCs' electrical RPM, the battery in mV and the
// fault bits.
type TelemetryB struct {
	VESCLeftRPM  int16
	VESCRightRPM int16
	BatteryMV    uint16
	Faults       uint8
}

var le = binary.LittleEndian

func frame(id uint32, data ...byte) can.Frame {
	f := can.Frame{ID: id, Length: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

// Frame returns the 0x300 frame.
func (v Velocity) Frame() can.Frame {
	var b [4]byte
	le.PutUint16(b[0:], uint16(v.SpeedMMPS))
	le.PutUint16(b[2:], uint16(v.SteerMrad))
	return frame(IDVelocity, b[:]...)
}

// Frames returns the two 0x301 frames: Kp and Ki, then Kd.
func (g PIDGains) Frames() [2]can.Frame {
	var b [12]byte
	le.PutUint32(b[0:], math.Float32bits(g.Kp))
	le.PutUint32(b[4:], math.Float32bits(g.Ki))
	le.PutUint32(b[8:], math.Float32bits(g.Kd))
	return [2]can.Frame{frame(IDPID, b[:8]...), frame(IDPID, b[8:]...)}
}

// Frame returns the 0x302 frame.
func (m Mode) Frame() can.Frame { return frame(IDMode, byte(m)) }

// Frame returns the 0x303 frame.
func (c Config) Frame() can.Frame {
	var b [4]byte
	le.PutUint16(b[0:], c.TiltLimitX100)
	le.PutUint16(b[2:], c.MaxSpeedMMPS)
	return frame(IDConfig, b[:]...)
}

// Frame returns the 0x400 frame.
func (t TelemetryA) Frame() can.Frame {
	var b [7]byte
	le.PutUint16(b[0:], uint16(t.PitchX100))
	le.PutUint16(b[2:], uint16(t.PIDOut))
	le.PutUint16(b[4:], uint16(t.SpeedMMPS))
	b[6] = t.State
	return frame(IDTelemetryA, b[:]...)
}

// Frame returns the 0x401 frame.
func (t TelemetryB) Frame() can.Frame {
	var b [7]byte
	le.PutUint16(b[0:], uint16(t.VESCLeftRPM))
	le.PutUint16(b[2:], uint16(t.VESCRightRPM))
	le.PutUint16(b[4:], t.BatteryMV)
	b[6] = t.Faults
	return frame(IDTelemetryB, b[:]...)
}

// check verifies a frame's kind and length.
func check(f can.Frame, id uint32, n uint8) error {
	if f.Extended || f.Remote || f.ID != id {
		return fmt.Errorf("canmsg: frame 0x%03x (extended %v, remote %v): want standard data frame 0x%03x", f.ID, f.Extended, f.Remote, id)
	}
	if f.Length != n {
		return fmt.Errorf("canmsg: frame 0x%03x: length %d, want %d", id, f.Length, n)
	}
	return nil
}

// ParseVelocity decodes a 0x300 frame.
func ParseVelocity(f can.Frame) (Velocity, error) {
	if err := check(f, IDVelocity, 4); err != nil {
		return Velocity{}, err
	}
	return Velocity{SpeedMMPS: int16(le.Uint16(f.Data[0:])), SteerMrad: int16(le.Uint16(f.Data[2:]))}, nil
}

// ParseMode decodes a 0x302 frame.
func ParseMode(f can.Frame) (Mode, error) {
	if err := check(f, IDMode, 1); err != nil {
		return 0, err
	}
	m := Mode(f.Data[0])
	if m > ModeEStop {
		return 0, fmt.Errorf("canmsg: frame 0x302 mode: %d, want 0–3", m)
	}
	return m, nil
}

// ParseConfig decodes a 0x303 frame.
func ParseConfig(f can.Frame) (Config, error) {
	if err := check(f, IDConfig, 4); err != nil {
		return Config{}, err
	}
	return Config{TiltLimitX100: le.Uint16(f.Data[0:]), MaxSpeedMMPS: le.Uint16(f.Data[2:])}, nil
}

// ParseTelemetryA decodes a 0x400 frame.
func ParseTelemetryA(f can.Frame) (TelemetryA, error) {
	if err := check(f, IDTelemetryA, 7); err != nil {
		return TelemetryA{}, err
	}
	return TelemetryA{
		PitchX100: int16(le.Uint16(f.Data[0:])), PIDOut: int16(le.Uint16(f.Data[2:])),
		SpeedMMPS: int16(le.Uint16(f.Data[4:])), State: f.Data[6],
	}, nil
}

// ParseTelemetryB decodes a 0x401 frame.
func ParseTelemetryB(f can.Frame) (TelemetryB, error) {
	if err := check(f, IDTelemetryB, 7); err != nil {
		return TelemetryB{}, err
	}
	return TelemetryB{
		VESCLeftRPM: int16(le.Uint16(f.Data[0:])), VESCRightRPM: int16(le.Uint16(f.Data[2:])),
		BatteryMV: le.Uint16(f.Data[4:]), Faults: f.Data[6],
	}, nil
}

// PIDAssembler joins the two 0x301 frames.
type PIDAssembler struct {
	kpki    [8]byte
	pending bool
}

// Add takes a 0x301 frame. It returns the gains and true when f completes
// a set; a Kd frame with no Kp/Ki frame before it is an error.
func (a *PIDAssembler) Add(f can.Frame) (PIDGains, bool, error) {
	if f.Extended || f.Remote || f.ID != IDPID {
		return PIDGains{}, false, fmt.Errorf("canmsg: frame 0x%03x: want standard data frame 0x301", f.ID)
	}
	switch f.Length {
	case 8:
		copy(a.kpki[:], f.Data[:8])
		a.pending = true
		return PIDGains{}, false, nil
	case 4:
		if !a.pending {
			return PIDGains{}, false, fmt.Errorf("canmsg: frame 0x301 Kd: no Kp/Ki frame before it")
		}
		a.pending = false
		g := PIDGains{
			Kp: math.Float32frombits(le.Uint32(a.kpki[0:])),
			Ki: math.Float32frombits(le.Uint32(a.kpki[4:])),
			Kd: math.Float32frombits(le.Uint32(f.Data[0:])),
		}
		return g, true, nil
	}
	a.pending = false
	return PIDGains{}, false, fmt.Errorf("canmsg: frame 0x301: length %d, want 8 (Kp, Ki) or 4 (Kd)", f.Length)
}
