package rc

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/gpio"
)

const us = time.Microsecond

func TestPPMEdgesGolden(t *testing.T) {
	edges, next := PPMEdges(t0, []uint16{1000, 1500, 2000, 1200}, nil)
	H, L := gpio.High, gpio.Low
	e := func(l gpio.Level, at time.Duration) gpio.EdgeEvent { return gpio.EdgeEvent{Level: l, Time: t0.Add(at)} }
	want := []gpio.EdgeEvent{
		e(H, 0), e(L, 400*us),
		e(H, 1000*us), e(L, 1400*us),
		e(H, 2500*us), e(L, 2900*us),
		e(H, 4500*us), e(L, 4900*us),
		e(H, 5700*us), e(L, 6100*us),
	}
	if !slices.Equal(edges, want) {
		t.Errorf("edges =\n%v\nwant\n%v", edges, want)
	}
	if !next.Equal(t0.Add(22500 * us)) {
		t.Errorf("next frame at %v, want +22.5ms", next.Sub(t0))
	}
	inv, _ := PPMEdges(t0, []uint16{1000}, &PPMOptions{Inverted: true, Pulse: 300 * us})
	if inv[0] != e(L, 0) || inv[1] != e(H, 300*us) {
		t.Errorf("inverted edges = %v", inv)
	}
	// 16 channels at 2000 µs do not fit 22.5 ms with a sync: the frame
	// stretches to leave 3 ms.
	full := make([]uint16, 16)
	for i := range full {
		full[i] = 2000
	}
	_, next = PPMEdges(t0, full, nil)
	if want := t0.Add(32*time.Millisecond + PPMDefaultMinGap); !next.Equal(want) {
		t.Errorf("stretched frame: next at %v, want %v", next.Sub(t0), want.Sub(t0))
	}
}

// ppmStream returns the edges of n frames with the given channels.
func ppmStream(n int, ch []uint16, o *PPMOptions) []gpio.EdgeEvent {
	var all []gpio.EdgeEvent
	at := t0
	for range n {
		e, next := PPMEdges(at, ch, o)
		all = append(all, e...)
		at = next
	}
	return all
}

func TestPPMDecode(t *testing.T) {
	for _, inverted := range []bool{false, true} {
		ch := []uint16{1000, 1250, 1500, 1750, 2000, 988, 2012, 1500}
		o := &PPMOptions{Inverted: inverted}
		var got []Frame
		d := NewPPMDecoder(o, collect(&got))
		for _, e := range ppmStream(5, ch, o) {
			d.Edge(e)
		}
		// The first frame's start has no interval before it, so it is not
		// known to be a sync; each frame is delivered at the next one's
		// start. Five frames give three.
		if len(got) != 3 {
			t.Fatalf("inverted=%v: %d frames, want 3 (stats %+v)", inverted, len(got), d.Stats())
		}
		for i, f := range got {
			if f.Protocol != PPM || !slices.Equal(f.Channels(), ch) || !slices.Equal(f.Raw[:f.Count], ch) {
				t.Errorf("inverted=%v frame %d = %v, want %v", inverted, i, f.Channels(), ch)
			}
			if want := t0.Add(time.Duration(i+2) * PPMPeriod); !f.Time.Equal(want) {
				t.Errorf("frame %d at %v, want %v", i, f.Time.Sub(t0), want.Sub(t0))
			}
			if i > 0 && f.Interval != PPMPeriod {
				t.Errorf("frame %d interval %v, want %v", i, f.Interval, PPMPeriod)
			}
		}
	}
}

func TestPPMRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ch     []uint16
		mangle func([]gpio.EdgeEvent) []gpio.EdgeEvent
	}{
		{"glitch pulse inside frame 2", []uint16{1500, 1500, 1500, 1500, 1500, 1500}, func(e []gpio.EdgeEvent) []gpio.EdgeEvent {
			at := t0.Add(PPMPeriod + 2100*us)
			e = append(e, gpio.EdgeEvent{Level: gpio.High, Time: at}, gpio.EdgeEvent{Level: gpio.Low, Time: at.Add(50 * us)})
			sort.SliceStable(e, func(i, j int) bool { return e[i].Time.Before(e[j].Time) })
			return e
		}},
		// Two 1000 µs channels merge into one valid 2000 µs interval: only
		// the channel count gives it away.
		{"pulse missing in frame 3", []uint16{1000, 1000, 1000, 1000, 1000, 1000}, func(e []gpio.EdgeEvent) []gpio.EdgeEvent {
			n := 2 * (6 + 1) // edges a frame
			return append(e[:2*n+4:2*n+4], e[2*n+6:]...)
		}},
	} {
		var got []Frame
		d := NewPPMDecoder(nil, collect(&got))
		for _, e := range tc.mangle(ppmStream(5, tc.ch, nil)) {
			d.Edge(e)
		}
		// Frames 2 to 4 are delivered (see TestPPMDecode); one is damaged.
		if len(got) != 2 || d.Stats().BadFrames != 1 {
			t.Errorf("%s: %d frames, stats %+v; want 2 good and 1 bad", tc.name, len(got), d.Stats())
		}
		for _, f := range got {
			if !slices.Equal(f.Channels(), tc.ch) {
				t.Errorf("%s: frame %v, want %v", tc.name, f.Channels(), tc.ch)
			}
		}
	}
	var got []Frame
	d := NewPPMDecoder(nil, collect(&got))
	for _, e := range ppmStream(4, []uint16{1500, 1500, 1500}, nil) {
		d.Edge(e)
	}
	if len(got) != 0 || d.Stats().BadFrames != 2 {
		t.Errorf("3-channel frames: %d frames, stats %+v; want none and 2 bad", len(got), d.Stats())
	}
}

// pwmStream returns the edges of n 50 Hz frames of servo pulses on each
// channel, in time order, as (channel, edge) pairs.
type chEdge struct {
	ch int
	e  gpio.EdgeEvent
}

func pwmStream(n int, widths []uint16) []chEdge {
	var all []chEdge
	for f := range n {
		start := t0.Add(time.Duration(f) * PWMPeriod)
		for c, w := range widths {
			for _, e := range PWMPulse(start, w) {
				all = append(all, chEdge{c, e})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].e.Time.Before(all[j].e.Time) })
	return all
}

func TestPWMDecode(t *testing.T) {
	widths := []uint16{1500, 1000, 2000, 1234}
	var got []Frame
	d, err := NewPWMDecoder(len(widths), 0, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range pwmStream(5, widths) {
		d.Edge(x.ch, x.e)
	}
	if len(got) != 5 {
		t.Fatalf("%d frames, want 5 (one per channel-1 pulse)", len(got))
	}
	// In the first frame channel 1 ends at 1500 µs: channels 2 (1000 µs)
	// and 4 (1234 µs) ended before it, 3 (2000 µs) had not.
	if want := []uint16{1500, 1000, 0, 1234}; !slices.Equal(got[0].Channels(), want) {
		t.Errorf("first frame = %v, want %v", got[0].Channels(), want)
	}
	for i, f := range got[1:] {
		if !slices.Equal(f.Channels(), widths) || f.Interval != PWMPeriod || f.Protocol != PWM {
			t.Errorf("frame %d = %v interval %v, want %v every %v", i+1, f.Channels(), f.Interval, widths, PWMPeriod)
		}
	}
}

func TestPWMStaleAndRejects(t *testing.T) {
	var got []Frame
	d, _ := NewPWMDecoder(2, 50*time.Millisecond, collect(&got))
	for _, x := range pwmStream(10, []uint16{1500, 1600}) {
		if x.ch == 1 && x.e.Time.Sub(t0) > 60*time.Millisecond {
			continue // channel 2's wire is cut after three frames
		}
		d.Edge(x.ch, x.e)
	}
	last := got[len(got)-1]
	if last.Micros[0] != 1500 || last.Micros[1] != 0 {
		t.Errorf("after channel 2 went quiet: %v, want [1500 0]", last.Channels())
	}
	if got[2].Micros[1] != 1600 {
		t.Errorf("while channel 2 was alive: %v", got[2].Channels())
	}
	before := d.Stats()
	d.Edge(0, gpio.EdgeEvent{Level: gpio.High, Time: t0.Add(time.Second)})
	d.Edge(0, gpio.EdgeEvent{Level: gpio.Low, Time: t0.Add(time.Second + 3000*us)}) // too long
	d.Edge(0, gpio.EdgeEvent{Level: gpio.Low, Time: t0.Add(2 * time.Second)})       // no rising edge
	d.Edge(7, gpio.EdgeEvent{Level: gpio.High, Time: t0.Add(2 * time.Second)})      // no such channel
	st := d.Stats()
	if st.BadFrames != before.BadFrames+1 || st.Discarded != before.Discarded+2 || st.Frames != before.Frames {
		t.Errorf("stats %+v → %+v; want one more bad, two more discarded", before, st)
	}
	for _, n := range []int{0, 17} {
		if _, err := NewPWMDecoder(n, 0, nil); err == nil {
			t.Errorf("NewPWMDecoder(%d) succeeded", n)
		}
	}
}
