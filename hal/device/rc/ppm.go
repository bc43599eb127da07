package rc

import (
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

// PPM timing: an interval between pulse starts longer than PPMSyncMin is the
// frame sync; a channel interval lies between PPMChannelMin and
// PPMChannelMax (µs).
const (
	PPMSyncMin       = 2700 * time.Microsecond
	PPMChannelMin    = 750
	PPMChannelMax    = 2250
	PPMMinChannels   = 4
	PPMDefaultPulse  = 400 * time.Microsecond
	PPMDefaultMinGap = 3 * time.Millisecond // shortest sync an encoder leaves
)

// PPMOptions configures a PPM encoder or decoder. The zero value is the
// usual positive PPM: 22.5 ms frames of 400 µs high pulses.
type PPMOptions struct {
	// Inverted means the line idles high and pulses are low (some
	// receivers' "negative" PPM): the decoder then times falling edges.
	Inverted bool
	// Period is the encoder's frame length; 0 means PPMPeriod. A frame too
	// full to leave a sync gap of PPMDefaultMinGap is stretched.
	Period time.Duration
	// Pulse is the width of the encoder's pulses; 0 means PPMDefaultPulse.
	Pulse time.Duration
}

func (o *PPMOptions) withDefaults() PPMOptions {
	var v PPMOptions
	if o != nil {
		v = *o
	}
	if v.Period <= 0 {
		v.Period = PPMPeriod
	}
	if v.Pulse <= 0 {
		v.Pulse = PPMDefaultPulse
	}
	return v
}

// levels returns the level of a pulse and of the idle line.
func (o PPMOptions) levels() (pulse, idle gpio.Level) {
	if o.Inverted {
		return gpio.Low, gpio.High
	}
	return gpio.High, gpio.Low
}

// PPMEdges returns the edges of one PPM frame starting at start carrying the
// channels micros (µs, pulse start to pulse start), and when the next frame
// starts. A frame of n channels is n+1 pulses: the last one closes the last
// channel, then the line idles until the next frame's first pulse.
func PPMEdges(start time.Time, micros []uint16, o *PPMOptions) (edges []gpio.EdgeEvent, next time.Time) {
	opt := o.withDefaults()
	pulse, idle := opt.levels()
	edges = make([]gpio.EdgeEvent, 0, 2*(len(micros)+1))
	t := start
	for i := 0; i <= len(micros); i++ {
		edges = append(edges, gpio.EdgeEvent{Level: pulse, Time: t}, gpio.EdgeEvent{Level: idle, Time: t.Add(opt.Pulse)})
		if i < len(micros) {
			t = t.Add(time.Duration(micros[i]) * time.Microsecond)
		}
	}
	next = start.Add(opt.Period)
	if earliest := t.Add(PPMDefaultMinGap); next.Before(earliest) {
		next = earliest
	}
	return edges, next
}

// PPMDecoder decodes a PPM sum signal from the edges of its pin. Give it
// every edge (the pin may watch both); it times the ones that start pulses.
// Frames are delivered at the sync that ends them.
type PPMDecoder struct {
	start    gpio.Level // level after the edge that starts a pulse
	onFrame  func(Frame)
	last     time.Time // previous pulse start
	haveLast bool
	synced   bool // a sync has been seen, so channels are counted from it
	valid    bool // no bad interval since the sync
	n        int
	ch       [MaxChannels]uint16
	stable   int // channel count of the good frames
	lastN    int // channel count of the previous complete frame
	lastGood time.Time
	haveGood bool
	stats    Stats
}

// NewPPMDecoder returns a decoder for a signal as o describes (nil: positive
// PPM), calling onFrame (nil: nobody) with every good frame.
func NewPPMDecoder(o *PPMOptions, onFrame func(Frame)) *PPMDecoder {
	opt := o.withDefaults()
	pulse, _ := opt.levels()
	return &PPMDecoder{start: pulse, onFrame: onFrame}
}

// Stats returns the counts so far: BadFrames are frames with an out-of-range
// interval, too few or too many channels; Discarded are pulses before the
// first sync.
func (d *PPMDecoder) Stats() Stats { return d.stats }

// Edge hands over one edge of the PPM pin. Edge must not be called
// concurrently.
func (d *PPMDecoder) Edge(ev gpio.EdgeEvent) {
	if ev.Level != d.start {
		return
	}
	if !d.haveLast {
		d.last, d.haveLast = ev.Time, true
		d.stats.Discarded++
		return
	}
	iv := ev.Time.Sub(d.last)
	d.last = ev.Time
	if iv > PPMSyncMin {
		d.sync(ev.Time)
		return
	}
	if !d.synced {
		d.stats.Discarded++
		return
	}
	us := iv / time.Microsecond
	if us < PPMChannelMin || us > PPMChannelMax || d.n >= MaxChannels {
		d.valid = false
		return
	}
	d.ch[d.n] = uint16(us)
	d.n++
}

// sync ends the frame being collected at a sync interval ending at at.
func (d *PPMDecoder) sync(at time.Time) {
	if d.synced {
		if d.valid && d.n >= PPMMinChannels && d.countOK() {
			d.emit(at)
		} else {
			d.stats.BadFrames++
		}
		if d.valid {
			d.lastN = d.n
		}
	}
	d.synced, d.valid, d.n = true, true, 0
}

// countOK reports whether a frame of d.n channels is believable. A lost
// pulse merges two channels into one valid-looking interval, so a frame
// whose channel count differs from the frames before it is rejected, unless
// the frame before it had the same count: a transmitter that really changed
// its channel count is followed after one frame.
func (d *PPMDecoder) countOK() bool {
	if d.stable == 0 || d.n == d.stable || d.n == d.lastN {
		d.stable = d.n
		return true
	}
	return false
}

func (d *PPMDecoder) emit(at time.Time) {
	d.stats.Frames++
	fr := Frame{Protocol: PPM, Time: at, Count: d.n}
	if d.haveGood {
		fr.Interval = at.Sub(d.lastGood)
	}
	d.lastGood, d.haveGood = at, true
	copy(fr.Micros[:], d.ch[:d.n])
	copy(fr.Raw[:], d.ch[:d.n])
	if d.onFrame != nil {
		d.onFrame(fr)
	}
}
