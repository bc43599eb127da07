package rc

import (
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

// PWM pulse limits (µs): a receiver's servo outputs stay within them; a
// longer or shorter high time is noise.
const (
	PWMPulseMin = 500
	PWMPulseMax = 2500
)

// PWMDefaultStale is how long a PWM channel keeps its last width without a
// new pulse: five 50 Hz frames.
const PWMDefaultStale = 100 * time.Millisecond

// PWMPulse returns the two edges of a servo pulse of micros µs starting at
// start: rising, then falling.
func PWMPulse(start time.Time, micros uint16) [2]gpio.EdgeEvent {
	return [2]gpio.EdgeEvent{
		{Level: gpio.High, Time: start},
		{Level: gpio.Low, Time: start.Add(time.Duration(micros) * time.Microsecond)},
	}
}

// PWMDecoder measures the high time of one servo signal per channel, each on
// its own pin. A frame is delivered each time channel 1 completes a pulse
// (its period is the frame rate), holding every channel's latest width; a
// channel with no good pulse within the stale time reads 0.
type PWMDecoder struct {
	n       int
	stale   time.Duration
	onFrame func(Frame)
	ch      [MaxChannels]pwmChannel
	last    time.Time // channel 1's previous rising edge
	hasLast bool
	stats   Stats
}

type pwmChannel struct {
	high  bool      // a rising edge was seen and no falling one since
	rise  time.Time // when the pulse started
	width uint16    // µs of the last good pulse
	at    time.Time // when it ended
	ok    bool      // width holds a pulse
}

// NewPWMDecoder returns a decoder of channels pins (1–16), delivering frames
// to onFrame (nil: nobody). stale is how long a channel keeps its last width;
// 0 means PWMDefaultStale.
func NewPWMDecoder(channels int, stale time.Duration, onFrame func(Frame)) (*PWMDecoder, error) {
	if channels < 1 || channels > MaxChannels {
		return nil, fmt.Errorf("rc: PWM channels is %d, want 1 to %d", channels, MaxChannels)
	}
	if stale <= 0 {
		stale = PWMDefaultStale
	}
	return &PWMDecoder{n: channels, stale: stale, onFrame: onFrame}, nil
}

// Stats returns the counts so far: BadFrames are pulses out of range;
// Discarded are falling edges with no rising edge before them.
func (d *PWMDecoder) Stats() Stats { return d.stats }

// Edge hands over an edge of channel ch's pin (0 is channel 1). Edges of a
// channel out of range are discarded. Edge must not be called concurrently.
func (d *PWMDecoder) Edge(ch int, ev gpio.EdgeEvent) {
	if ch < 0 || ch >= d.n {
		d.stats.Discarded++
		return
	}
	c := &d.ch[ch]
	if ev.Level == gpio.High {
		c.high, c.rise = true, ev.Time
		return
	}
	if !c.high {
		d.stats.Discarded++
		return
	}
	c.high = false
	w := ev.Time.Sub(c.rise) / time.Microsecond
	if w < PWMPulseMin || w > PWMPulseMax {
		d.stats.BadFrames++
		return
	}
	c.width, c.at, c.ok = uint16(w), ev.Time, true
	if ch == 0 {
		d.emit(ev.Time, c.rise)
	}
}

func (d *PWMDecoder) emit(at, rise time.Time) {
	d.stats.Frames++
	fr := Frame{Protocol: PWM, Time: at, Count: d.n}
	if d.hasLast {
		fr.Interval = rise.Sub(d.last)
	}
	d.last, d.hasLast = rise, true
	for i := range d.n {
		c := &d.ch[i]
		if c.ok && at.Sub(c.at) <= d.stale {
			fr.Micros[i], fr.Raw[i] = c.width, c.width
		}
	}
	if d.onFrame != nil {
		d.onFrame(fr)
	}
}
