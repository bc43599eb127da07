package scenario

import (
	"fmt"
	"math"
	"time"
)

// MetricResult is one metric's outcome in the report.
type MetricResult struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Value     float64   `json:"value"`
	Tolerance Tolerance `json:"tolerance"`
	Pass      bool      `json:"pass"`
	// Detail says how the value came about when it is not a plain
	// measurement ("never settled", "no samples").
	Detail string `json:"detail,omitempty"`
}

// Tolerance bounds a metric's value.
type Tolerance struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// evaluate computes a metric over the recorded signals.
func evaluate(m Metric, series map[string][]Sample, duration time.Duration) MetricResult {
	res := MetricResult{Name: m.Name, Kind: m.Kind, Tolerance: Tolerance{m.Min, m.Max}}
	from := m.From.D().Seconds()
	to := duration.Seconds()
	if m.To != nil {
		to = m.To.D().Seconds()
	}
	window := func(name string) []Sample {
		var out []Sample
		for _, s := range series[name] {
			if s.T >= from && s.T <= to {
				out = append(out, s)
			}
		}
		return out
	}
	v, detail := math.NaN(), ""
	switch m.Kind {
	case KindOvershoot:
		v, detail = overshoot(window(m.Signal), *m.Target)
	case KindSettlingTime:
		v, detail = settlingTime(window(m.Signal), *m.Target, m.Band, from, to)
	case KindMaxAbs, KindMax, KindMin:
		w := window(m.Signal)
		if len(w) > 0 {
			v = w[0].V
			if m.Kind == KindMaxAbs {
				v = math.Abs(v)
			}
		}
		for _, s := range w {
			switch m.Kind {
			case KindMaxAbs:
				v = math.Max(v, math.Abs(s.V))
			case KindMax:
				v = math.Max(v, s.V)
			case KindMin:
				v = math.Min(v, s.V)
			}
		}
	case KindChange:
		if w := window(m.Signal); len(w) > 0 {
			v = w[len(w)-1].V - w[0].V
			detail = fmt.Sprintf("from %.4g to %.4g", w[0].V, w[len(w)-1].V)
		}
	case KindFinal:
		if w := window(m.Signal); len(w) > 0 {
			v = w[len(w)-1].V
			if m.Target != nil {
				v -= *m.Target
				detail = fmt.Sprintf("final value %.4g minus target %.4g", w[len(w)-1].V, *m.Target)
			}
		}
	case KindLatency:
		names := m.Signals
		if m.Signal != "" {
			names = append([]string{m.Signal}, names...)
		}
		var ws [][]Sample
		for _, n := range names {
			ws = append(ws, window(n))
		}
		v, detail = latency(ws, m.Threshold, from, to)
	case KindPathError:
		v = pathError(window(m.Signals[0]), window(m.Signals[1]), m.Path)
	case KindOdometryDrift:
		var last [4]float64
		ok := true
		for i, n := range m.Signals {
			w := window(n)
			if len(w) == 0 {
				ok = false
				break
			}
			last[i] = w[len(w)-1].V
		}
		if ok {
			v = math.Hypot(last[0]-last[2], last[1]-last[3])
		}
	}
	if math.IsNaN(v) {
		res.Value, res.Detail = 0, "no samples in the window"
		return res
	}
	res.Value, res.Detail = v, detail
	res.Pass = (m.Max == nil || v <= *m.Max) && (m.Min == nil || v >= *m.Min)
	return res
}

// overshoot is how far the signal went past the target, in the direction
// of the step from its first value in the window (0 if it never passed it).
func overshoot(w []Sample, target float64) (float64, string) {
	if len(w) == 0 {
		return math.NaN(), ""
	}
	dir := 1.0
	if target < w[0].V {
		dir = -1
	}
	worst := 0.0
	for _, s := range w {
		worst = math.Max(worst, dir*(s.V-target))
	}
	return worst, ""
}

// settlingTime is the time from the window's start after which the signal
// stays within band of target until the window's end.
func settlingTime(w []Sample, target, band, from, to float64) (float64, string) {
	if len(w) == 0 {
		return math.NaN(), ""
	}
	if math.Abs(w[len(w)-1].V-target) > band {
		return to - from, "never settled: outside the band at the end"
	}
	settled := w[0].T
	for i, s := range w {
		if math.Abs(s.V-target) > band && i+1 < len(w) {
			settled = w[i+1].T
		}
	}
	return settled - from, ""
}

// latency is the time from the window's start until every signal is
// within threshold of zero.
func latency(ws [][]Sample, threshold, from, to float64) (float64, string) {
	// Walk the first signal's times; the others are read at or before.
	if len(ws) == 0 || len(ws[0]) == 0 {
		return math.NaN(), ""
	}
	at := func(w []Sample, t float64) (float64, bool) {
		v, ok := 0.0, false
		for _, s := range w {
			if s.T > t {
				break
			}
			v, ok = s.V, true
		}
		return v, ok
	}
	for _, s := range ws[0] {
		still := true
		for _, w := range ws {
			v, ok := at(w, s.T)
			if !ok || math.Abs(v) > threshold {
				still = false
				break
			}
		}
		if still {
			return s.T - from, ""
		}
	}
	return to - from, "never came to rest"
}

// pathError is the largest distance of the recorded (x, y) points from the
// reference polyline.
func pathError(xs, ys []Sample, path [][2]float64) float64 {
	n := min(len(xs), len(ys))
	if n == 0 {
		return math.NaN()
	}
	worst := 0.0
	for i := 0; i < n; i++ {
		best := math.Inf(1)
		for j := 0; j+1 < len(path); j++ {
			best = math.Min(best, segmentDistance(xs[i].V, ys[i].V, path[j], path[j+1]))
		}
		worst = math.Max(worst, best)
	}
	return worst
}

func segmentDistance(x, y float64, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = math.Max(0, math.Min(1, ((x-a[0])*dx+(y-a[1])*dy)/l2))
	}
	return math.Hypot(x-(a[0]+t*dx), y-(a[1]+t*dy))
}
