package servo

import (
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/hal/pwm"
)

// Config describes a servo and the joint it drives. Zero fields take the
// defaults of a standard 180° hobby servo.
type Config struct {
	// MinPulse and MaxPulse are the pulses at the ends of the travel;
	// 0 means 500 µs and 2500 µs.
	MinPulse, MaxPulse time.Duration
	// Range is the travel between MinPulse and MaxPulse, degrees; 0 means
	// 180.
	Range float64
	// MinAngle and MaxAngle limit the commanded angle, degrees; both 0
	// means ±Range/2.
	MinAngle, MaxAngle float64
	// Trim is added to every angle before it becomes a pulse, degrees: the
	// offset that centres a horn mounted a spline off.
	Trim float64
	// Reversed mirrors the direction.
	Reversed bool
	// FreqHz is the frame rate; 0 means 50 Hz.
	FreqHz float64
}

// Servo is one hobby servo on a PWM output. Methods are not safe for
// concurrent use.
type Servo struct {
	pin   pwm.Pin
	cfg   Config
	angle float64
	on    bool
}

// New returns a servo on pin, not yet driven. It checks cfg: pulses
// positive and ordered and shorter than a frame, a positive range, limits
// ordered and within the travel once trimmed.
func New(pin pwm.Pin, cfg *Config) (*Servo, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.MinPulse == 0 {
		c.MinPulse = 500 * time.Microsecond
	}
	if c.MaxPulse == 0 {
		c.MaxPulse = 2500 * time.Microsecond
	}
	if c.Range == 0 {
		c.Range = 180
	}
	if c.FreqHz == 0 {
		c.FreqHz = 50
	}
	if c.MinAngle == 0 && c.MaxAngle == 0 {
		c.MinAngle, c.MaxAngle = -c.Range/2, c.Range/2
	}
	switch {
	case !(c.FreqHz > 0) || math.IsInf(c.FreqHz, 0):
		return nil, fmt.Errorf("servo: FreqHz %v: want a positive frequency", c.FreqHz)
	case c.MinPulse <= 0 || c.MaxPulse <= c.MinPulse:
		return nil, fmt.Errorf("servo: pulses %v–%v: want 0 < MinPulse < MaxPulse", c.MinPulse, c.MaxPulse)
	case c.MaxPulse.Seconds() >= 1/c.FreqHz:
		return nil, fmt.Errorf("servo: MaxPulse %v does not fit a %v Hz frame", c.MaxPulse, c.FreqHz)
	case !(c.Range > 0) || math.IsInf(c.Range, 0):
		return nil, fmt.Errorf("servo: Range %v°: want a positive travel", c.Range)
	case !(c.MinAngle <= c.MaxAngle):
		return nil, fmt.Errorf("servo: limits %v°–%v°: want MinAngle ≤ MaxAngle", c.MinAngle, c.MaxAngle)
	case math.IsNaN(c.Trim) || math.IsInf(c.Trim, 0):
		return nil, fmt.Errorf("servo: Trim %v°: want a finite angle", c.Trim)
	}
	if lo, hi := c.MinAngle+c.Trim, c.MaxAngle+c.Trim; lo < -c.Range/2-1e-9 || hi > c.Range/2+1e-9 {
		return nil, fmt.Errorf("servo: limits %v°–%v° with trim %v° reach beyond the ±%v° travel", c.MinAngle, c.MaxAngle, c.Trim, c.Range/2)
	}
	return &Servo{pin: pin, cfg: c}, nil
}

// Config returns the configuration with defaults filled in.
func (s *Servo) Config() Config { return s.cfg }

// Clamp returns angle limited to MinAngle–MaxAngle; NaN gives the centre of
// the limits.
func (s *Servo) Clamp(angle float64) float64 {
	if math.IsNaN(angle) {
		return (s.cfg.MinAngle + s.cfg.MaxAngle) / 2
	}
	return math.Max(s.cfg.MinAngle, math.Min(s.cfg.MaxAngle, angle))
}

// Pulse returns the pulse width for angle, after clamping and trim.
func (s *Servo) Pulse(angle float64) time.Duration {
	return time.Duration(math.Round(s.pulseNS(angle)))
}

// pulseNS is Pulse in nanoseconds before rounding: SetAngle drives the
// exact duty, so that a servo's angle does not move by the rounding.
func (s *Servo) pulseNS(angle float64) float64 {
	a := s.Clamp(angle) + s.cfg.Trim
	if s.cfg.Reversed {
		a = -a
	}
	centre := float64(s.cfg.MinPulse+s.cfg.MaxPulse) / 2
	span := float64(s.cfg.MaxPulse - s.cfg.MinPulse)
	return centre + a/s.cfg.Range*span
}

// Angle returns the angle a pulse width commands: the inverse of Pulse,
// without clamping (a pulse from elsewhere may be beyond the limits).
func (s *Servo) Angle(pulse time.Duration) float64 {
	centre := float64(s.cfg.MinPulse+s.cfg.MaxPulse) / 2
	span := float64(s.cfg.MaxPulse - s.cfg.MinPulse)
	a := (float64(pulse) - centre) / span * s.cfg.Range
	if s.cfg.Reversed {
		a = -a
	}
	return a - s.cfg.Trim
}

// SetAngle drives the servo to angle, clamped to the limits, and returns
// the angle commanded.
func (s *Servo) SetAngle(angle float64) (float64, error) {
	a := s.Clamp(angle)
	duty := s.pulseNS(a) * 1e-9 * s.cfg.FreqHz
	if err := s.pin.PWM(duty, s.cfg.FreqHz); err != nil {
		return s.angle, fmt.Errorf("servo: %v°: %w", a, err)
	}
	s.angle, s.on = a, true
	return a, nil
}

// Commanded returns the last angle set and whether the servo is driven.
func (s *Servo) Commanded() (angle float64, on bool) { return s.angle, s.on }

// Halt stops the pulses: a hobby servo then stops holding its position.
func (s *Servo) Halt() error {
	if err := s.pin.Halt(); err != nil {
		return fmt.Errorf("servo: halt: %w", err)
	}
	s.on = false
	return nil
}
