package plot

import "math"

// Series is one signal's recent samples, oldest first. Times are in
// seconds on any clock that only moves forward (the server's state
// timestamps); a sample older than the newest by more than Window is
// dropped.
type Series struct {
	Name   string
	Unit   string
	Window float64 // s
	t, v   []float64
}

// NewSeries returns an empty series keeping window seconds.
func NewSeries(name, unit string, window float64) *Series {
	return &Series{Name: name, Unit: unit, Window: window}
}

// Add appends a sample. A sample older than the newest is ignored (state
// updates can arrive out of order across topics); NaN and ±Inf are ignored.
func (s *Series) Add(t, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if n := len(s.t); n > 0 && t < s.t[n-1] {
		return
	}
	s.t, s.v = append(s.t, t), append(s.v, v)
	cut := 0
	for cut < len(s.t) && s.t[cut] < t-s.Window {
		cut++
	}
	if cut > 0 {
		s.t = append(s.t[:0], s.t[cut:]...)
		s.v = append(s.v[:0], s.v[cut:]...)
	}
}

// Len is the number of samples held.
func (s *Series) Len() int { return len(s.t) }

// Sample returns sample i, oldest first.
func (s *Series) Sample(i int) (t, v float64) { return s.t[i], s.v[i] }

// Last returns the newest sample; ok is false when the series is empty.
func (s *Series) Last() (t, v float64, ok bool) {
	if len(s.t) == 0 {
		return 0, 0, false
	}
	return s.t[len(s.t)-1], s.v[len(s.v)-1], true
}

// ValueRange returns the smallest and largest value held, widened to at
// least minSpan around their middle so that a flat signal is drawn flat in
// the middle of its plot, not as noise filling it.
func (s *Series) ValueRange(minSpan float64) (lo, hi float64) {
	if len(s.v) == 0 {
		return -minSpan / 2, minSpan / 2
	}
	lo, hi = s.v[0], s.v[0]
	for _, v := range s.v {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi-lo < minSpan {
		mid := (lo + hi) / 2
		lo, hi = mid-minSpan/2, mid+minSpan/2
	}
	return lo, hi
}

// NiceStep returns a round step (1, 2 or 5 times a power of ten) that
// divides span into at most n intervals.
func NiceStep(span float64, n int) float64 {
	if !(span > 0) || n < 1 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// Ticks returns the multiples of step in [lo, hi].
func Ticks(lo, hi, step float64) []float64 {
	if !(step > 0) || hi < lo {
		return nil
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// Axes maps a plot's time and value ranges to a pixel rectangle (x, y, w,
// h; y grows down): the newest time (End) at the right edge, End-Window at
// the left, Lo at the bottom and Hi at the top.
type Axes struct {
	X, Y, W, H float64
	End        float64 // s, time at the right edge
	Window     float64 // s shown
	Lo, Hi     float64 // values at the bottom and top
}

// AxesFor returns the axes of s in the rectangle, ending at its newest
// sample (or at end if it is later: plots of one panel share a right edge).
func AxesFor(s *Series, x, y, w, h, end, minSpan float64) Axes {
	if t, _, ok := s.Last(); ok && t > end {
		end = t
	}
	lo, hi := s.ValueRange(minSpan)
	return Axes{X: x, Y: y, W: w, H: h, End: end, Window: s.Window, Lo: lo, Hi: hi}
}

// Point maps sample (t, v) to pixels.
func (a Axes) Point(t, v float64) (px, py float64) {
	px = a.X + a.W*(1-(a.End-t)/a.Window)
	py = a.Y + a.H*(1-(v-a.Lo)/(a.Hi-a.Lo))
	return px, py
}

// TimeTicks returns the tick ages in seconds before End (0, step, 2·step
// ...) that fit in the window, with at most n intervals.
func (a Axes) TimeTicks(n int) []float64 {
	return Ticks(0, a.Window, NiceStep(a.Window, n))
}

// ValueTicks returns round values between Lo and Hi, at most n intervals.
func (a Axes) ValueTicks(n int) []float64 {
	return Ticks(a.Lo, a.Hi, NiceStep(a.Hi-a.Lo, n))
}
