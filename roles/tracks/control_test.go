package tracks

import (
	"math"
	"testing"
)

func testGains() speedGains {
	return speedGains{Kp: 0.3, Ki: 3, FeedForwardVoltsPerMPS: 20, NominalVoltage: 25, MaxDuty: 0.95, MaxCorrection: 0.25}
}

func TestSpeedLoopFeedForwardAndBattery(t *testing.T) {
	l := speedLoop{g: testGains()}
	// On target, the duty is the back-EMF over the battery voltage.
	if d := l.step(0.5, 0, 0.5, 0.5, 25, 0.005); math.Abs(d-10.0/25) > 1e-12 {
		t.Errorf("duty %v at 0.5 m/s on 25 V, want 0.4", d)
	}
	// A sagging battery gets a larger duty for the same speed.
	if d := l.step(0.5, 0, 0.5, 0.5, 20, 0.005); math.Abs(d-0.5) > 1e-12 {
		t.Errorf("duty %v at 0.5 m/s on 20 V, want 0.5", d)
	}
	// Without a reading the nominal voltage stands in.
	if d := l.step(0.5, 0, 0.5, 0.5, 0, 0.005); math.Abs(d-0.4) > 1e-12 {
		t.Errorf("duty %v with no battery reading, want 0.4 on the nominal 25 V", d)
	}
}

func TestSpeedLoopAntiWindup(t *testing.T) {
	l := speedLoop{g: testGains()}
	// A track that does not move, for 10 s: the correction stops at its
	// authority and the integral does not grow beyond it.
	for range 2000 {
		l.step(0.5, 0, 0.5, 0, 25, 0.005)
	}
	if !l.corrSat || l.outSat || l.integral > 0.25+1e-12 {
		t.Fatalf("after 10 s stalled: integral %v, correction saturated %v, output %v", l.integral, l.corrSat, l.outSat)
	}
	// When the track answers, the wound-up part is only the authority:
	// one step later the duty is back within it of the feed-forward.
	d := l.step(0.5, 0, 0.5, 0.5, 25, 0.005)
	if d > 0.4+0.25+1e-12 {
		t.Errorf("duty %v once moving, want ≤ feed-forward 0.4 + 0.25", d)
	}
	// The output never exceeds max_duty, even with a huge reference.
	l.reset()
	for range 100 {
		if d := l.step(5, 0, 5, 0, 25, 0.005); d > 0.95 {
			t.Fatalf("duty %v beyond max_duty", d)
		}
	}
	if !l.outSat {
		t.Error("output saturation not reported")
	}
	// Integrating stops while the output is saturated.
	before := l.integral
	l.step(5, 0, 5, 0, 25, 0.005)
	if l.integral > before {
		t.Errorf("integral grew from %v to %v with the output saturated", before, l.integral)
	}
}

func TestSpeedObserverTracksSpeedAndRamps(t *testing.T) {
	const dt = 0.005
	o := newSpeedObserver(10)
	// 1400 counts/s (0.5 m/s on the tracks), quantized counts.
	var v float64
	for i := range 400 {
		v = o.update(math.Floor(1400*float64(i)*dt)+0.5, dt)
	}
	if math.Abs(v-1400) > 15 {
		t.Errorf("steady speed %v counts/s, want 1400", v)
	}
	// A constant acceleration is followed with a lag of 2a/ω (less some
	// in discrete time).
	o = newSpeedObserver(10)
	const a = 2800.0 // counts/s², 1 m/s²
	for i := range 400 {
		tm := float64(i) * dt
		v = o.update(math.Floor(0.5*a*tm*tm)+0.5, dt)
	}
	lag := 2 * a / (2 * math.Pi * 10)
	if want := a*399*dt - lag; math.Abs(v-want) > 0.3*lag {
		t.Errorf("ramping speed %v counts/s, want %v (lagging by %.0f)", v, want, lag)
	}
}

func TestRampTo(t *testing.T) {
	for _, tc := range []struct{ cur, target, want float64 }{
		{0, 1, 0.005}, {0, -1, -0.005}, {0.999, 1, 1}, {1, 0, 0.995},
	} {
		if got := rampTo(tc.cur, tc.target, 1, 0.005); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("rampTo(%v, %v) = %v, want %v", tc.cur, tc.target, got, tc.want)
		}
	}
}
