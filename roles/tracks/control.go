package tracks

import "math"

// speedGains are one track's speed loop settings (the speed_control
// section of tracks.yaml). Speeds are track surface speeds in m/s, the
// output an H-bridge duty, −1…1.
type speedGains struct {
	Kp float64 `yaml:"kp"` // duty per m/s of error
	Ki float64 `yaml:"ki"` // duty per m of accumulated error
	Kd float64 `yaml:"kd"` // duty per m/s² of measured acceleration
	// FeedForwardVoltsPerMPS is the motor's back-EMF per m/s of track
	// (gear ratio × Ke / sprocket radius): the voltage the track needs
	// to run at a speed with no load. Divided by the battery voltage it
	// is the duty that does it, so a sagging battery is compensated
	// before the loop sees an error.
	FeedForwardVoltsPerMPS float64 `yaml:"feedforward_volts_per_mps"`
	// FeedForwardVoltsPerMPS2 is the voltage that accelerates the track
	// (and its share of the body) by 1 m/s² through the motor's
	// resistance, so a ramp is followed without waiting for the
	// integral.
	FeedForwardVoltsPerMPS2 float64 `yaml:"feedforward_volts_per_mps2"`
	// StaticDuty is added in the direction of motion against the
	// drive's static friction.
	StaticDuty float64 `yaml:"static_duty"`
	// NominalVoltage stands in for the battery voltage until the power
	// monitor has read it, V.
	NominalVoltage float64 `yaml:"nominal_voltage"`
	// MaxDuty bounds the output.
	MaxDuty float64 `yaml:"max_duty"`
	// MaxCorrection bounds what the PID adds to the feed-forward, duty.
	MaxCorrection float64 `yaml:"max_correction"`
	// StallTimeoutMS is how long a track may be driven without turning
	// before the drive faults (Tracks.checkStall).
	StallTimeoutMS int `yaml:"stall_timeout_ms"`
}

// speedLoop is one track's speed controller: feed-forward plus a PID
// correction on the measured speed, the derivative taken on the
// measurement (a step in the reference gives no kick).
//
// The correction has limited authority, ±MaxCorrection: the feed-forward
// does the driving and the loop only makes up for what it cannot know
// (friction, slopes, pushes), so a track whose measurement is lost cannot
// be driven far beyond its reference. Anti-windup is by conditional
// integration: while the correction or the output is saturated the
// integral only moves in the direction that brings it back, and it never
// exceeds the authority itself.
type speedLoop struct {
	g        speedGains
	integral float64 // duty
	lastMeas float64
	primed   bool
	// corrSat and outSat say whether the last step's correction and
	// output were at their limits.
	corrSat, outSat bool
}

// step returns the duty for reference speed ref (m/s) changing at
// refAccel (m/s²), which drive the feed-forward, and measurement meas
// (m/s), which the PID compares with refSeen, the reference as the speed
// measurement would show it; with the battery at vbat volts, dt seconds
// after the previous step.
func (l *speedLoop) step(ref, refAccel, refSeen, meas, vbat, dt float64) float64 {
	if vbat <= 0 {
		vbat = l.g.NominalVoltage
	}
	ff := (l.g.FeedForwardVoltsPerMPS*ref + l.g.FeedForwardVoltsPerMPS2*refAccel) / vbat
	if ref > 0 {
		ff += l.g.StaticDuty
	} else if ref < 0 {
		ff -= l.g.StaticDuty
	}
	e := refSeen - meas
	d := 0.0
	if l.primed && dt > 0 {
		d = -l.g.Kd * (meas - l.lastMeas) / dt
	}
	l.lastMeas, l.primed = meas, true

	lim := l.g.MaxCorrection
	corr := l.g.Kp*e + l.integral + d
	di := l.g.Ki * e * dt
	winding := di > 0 && (corr >= lim || ff+corr >= l.g.MaxDuty) ||
		di < 0 && (corr <= -lim || ff+corr <= -l.g.MaxDuty)
	if !winding {
		l.integral = clamp(l.integral+di, -lim, lim)
		corr = l.g.Kp*e + l.integral + d
	}
	l.corrSat = math.Abs(corr) >= lim
	corr = clamp(corr, -lim, lim)
	out := ff + corr
	l.outSat = math.Abs(out) >= l.g.MaxDuty
	if math.IsNaN(out) {
		return 0
	}
	return clamp(out, -l.g.MaxDuty, l.g.MaxDuty)
}

// reset forgets the integral and the last measurement, for a fresh start
// after a stop.
func (l *speedLoop) reset() { l.integral, l.primed, l.corrSat, l.outSat = 0, false, false, false }

// rampTo moves cur towards target by at most rate·dt.
func rampTo(cur, target, rate, dt float64) float64 {
	step := rate * dt
	switch {
	case target > cur+step:
		return cur + step
	case target < cur-step:
		return cur - step
	}
	return target
}

// speedObserver estimates a track's speed from its encoder count, sampled
// every control period: a second-order tracking observer (the "tracking
// loop" of motor drives) whose position follows the count through a
// critically damped loop of bandwidth ω, with the speed as its integral
// state. It follows a constant speed without error and an acceleration a
// with a lag of 2a/ω (which the loop allows for by comparing the
// measurement with the reference seen through an identical observer),
// needs no edge timestamps (whose quality depends on how the edges are
// read) and smooths the counts' quantization.
type speedObserver struct {
	k1, k2   float64 // 2ω, ω²
	pos, vel float64 // counts, counts/s
	primed   bool
}

func newSpeedObserver(bandwidthHz float64) speedObserver {
	w := 2 * math.Pi * bandwidthHz
	return speedObserver{k1: 2 * w, k2: w * w}
}

// update takes the position (counts) dt seconds after the previous one
// and returns the speed estimate in counts per second.
func (o *speedObserver) update(meas, dt float64) float64 {
	if !o.primed {
		o.pos, o.vel, o.primed = meas, 0, true
		return 0
	}
	o.pos += o.vel * dt
	e := meas - o.pos
	o.pos += o.k1 * dt * e
	o.vel += o.k2 * dt * e
	return o.vel
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }
