package rc

// Normalize maps a pulse width in µs to the channel's range: a stick to
// −1..1 with 0 at its centre (each side scaled on its own, so an
// off-centre trim still reaches ±1 at the ends), a switch to 0..1 from min
// to max. Values beyond the calibration are clamped; reversed flips the
// result (−v for a stick, 1−v for a switch).
func (c Channel) Normalize(us uint16) float64 {
	v := float64(us)
	lo, hi, mid := float64(c.Min), float64(c.Max), float64(c.Center)
	if c.Type == TypeSwitch {
		n := 0.0
		if hi > lo {
			n = clamp((v-lo)/(hi-lo), 0, 1)
		}
		if c.Reversed {
			n = 1 - n
		}
		return n
	}
	var n float64
	switch {
	case v >= mid && hi > mid:
		n = (v - mid) / (hi - mid)
	case v < mid && mid > lo:
		n = (v - mid) / (mid - lo)
	}
	n = clamp(n, -1, 1)
	if c.Reversed {
		n = -n
	}
	return n
}

// Neutral is what the neutral failsafe sends for the channel: a stick at
// its centre (0), a switch in its low position (0), with the pulse width
// that reads so.
func (c Channel) Neutral() (us uint16, normalized float64) {
	if c.Type == TypeSwitch {
		if c.Reversed {
			return uint16(c.Max), 0
		}
		return uint16(c.Min), 0
	}
	return uint16(c.Center), 0
}

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
