package gpiotest

import (
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
)

func TestEdgesFilteredByConfiguredEdge(t *testing.T) {
	t0 := clock.Epoch()
	for _, tc := range []struct {
		edge gpio.Edge
		want []gpio.Level
	}{
		{gpio.NoEdge, nil},
		{gpio.RisingEdge, []gpio.Level{gpio.High, gpio.High}},
		{gpio.FallingEdge, []gpio.Level{gpio.Low, gpio.Low}},
		{gpio.BothEdges, []gpio.Level{gpio.High, gpio.Low, gpio.High, gpio.Low}},
	} {
		p := NewPin(17, nil)
		if err := p.In(gpio.PullDown, tc.edge); err != nil {
			t.Fatal(err)
		}
		var got []gpio.EdgeEvent
		p.WatchEdges(func(e gpio.EdgeEvent) { got = append(got, e) })
		// Low→High→High (no edge)→Low→High→Low.
		levels := []gpio.Level{gpio.High, gpio.High, gpio.Low, gpio.High, gpio.Low}
		for i, l := range levels {
			p.Set(l, t0.Add(time.Duration(i)*time.Millisecond))
		}
		if len(got) != len(tc.want) {
			t.Fatalf("edge %d: got %d events %v, want levels %v", tc.edge, len(got), got, tc.want)
		}
		for i, e := range got {
			if e.Level != tc.want[i] {
				t.Errorf("edge %d: event %d level %v, want %v", tc.edge, i, e.Level, tc.want[i])
			}
		}
	}
}

func TestEdgeTimestampsComeFromTheCaller(t *testing.T) {
	p := NewPin(4, nil)
	_ = p.In(gpio.PullDown, gpio.BothEdges)
	var got []gpio.EdgeEvent
	p.WatchEdges(func(e gpio.EdgeEvent) { got = append(got, e) })
	rise := clock.Epoch().Add(time.Second)
	p.Set(gpio.High, rise)
	p.Set(gpio.Low, rise.Add(1500*time.Microsecond))
	if len(got) != 2 {
		t.Fatalf("got %d events, want 2", len(got))
	}
	if w := got[1].Time.Sub(got[0].Time); w != 1500*time.Microsecond {
		t.Errorf("pulse width %v, want 1.5ms", w)
	}
}

func TestPullDecidesUndrivenLevel(t *testing.T) {
	p := NewPin(21, nil)
	at := clock.Epoch()
	_ = p.In(gpio.PullUp, gpio.FallingEdge)
	if p.Read() != gpio.High {
		t.Fatal("undriven input with pull-up reads low")
	}
	var falls int
	p.WatchEdges(func(gpio.EdgeEvent) { falls++ })
	p.Set(gpio.Low, at) // press
	if p.Read() != gpio.Low || falls != 1 {
		t.Errorf("pressed: level %v, falls %d; want low, 1", p.Read(), falls)
	}
	p.Release(at) // let go: the pull-up wins
	if p.Read() != gpio.High || falls != 1 {
		t.Errorf("released: level %v, falls %d; want high, 1", p.Read(), falls)
	}
	_ = p.In(gpio.Float, gpio.NoEdge)
	if p.Read() != gpio.High {
		t.Error("a floating input did not keep its last level")
	}
	_ = p.In(gpio.PullDown, gpio.NoEdge)
	if p.Read() != gpio.Low {
		t.Error("undriven input with pull-down reads high")
	}
	_ = p.In(gpio.PullNoChange, gpio.NoEdge)
	if p.Pull() != gpio.PullDown {
		t.Errorf("PullNoChange changed the pull to %v", p.Pull())
	}
}

func TestOutRecordsLevelsWithClock(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	p := NewPin(5, clk)
	var edges int
	_ = p.In(gpio.PullDown, gpio.BothEdges)
	p.WatchEdges(func(gpio.EdgeEvent) { edges++ })
	_ = p.Out(gpio.High)
	clk.Advance(time.Millisecond)
	_ = p.Out(gpio.Low)
	if !p.IsOutput() || p.Read() != gpio.Low {
		t.Errorf("IsOutput %v Read %v, want true low", p.IsOutput(), p.Read())
	}
	// Driving an output from outside changes nothing until it is an input.
	p.Set(gpio.High, clk.Now())
	if p.Read() != gpio.Low || edges != 0 {
		t.Errorf("output read %v with %d edges after Set, want low and none", p.Read(), edges)
	}
	want := []gpio.EdgeEvent{
		{Level: gpio.High, Time: clock.Epoch()},
		{Level: gpio.Low, Time: clock.Epoch().Add(time.Millisecond)},
	}
	got := p.Outs()
	if len(got) != len(want) {
		t.Fatalf("Outs() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Outs()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	_ = p.In(gpio.PullNoChange, gpio.BothEdges)
	if p.Read() != gpio.High {
		t.Error("input did not show the level driven while it was an output")
	}
}

func TestStopWatchingAndReentrantWatcher(t *testing.T) {
	p := NewPin(6, nil)
	_ = p.In(gpio.PullDown, gpio.BothEdges)
	var a, b int
	stopA := p.WatchEdges(func(gpio.EdgeEvent) { a++ })
	// A watcher that reads the pin must not deadlock.
	p.WatchEdges(func(e gpio.EdgeEvent) {
		if p.Read() != e.Level {
			t.Errorf("Read in watcher = %v, event %v", p.Read(), e.Level)
		}
		b++
	})
	p.Set(gpio.High, clock.Epoch())
	stopA()
	stopA()
	p.Set(gpio.Low, clock.Epoch())
	if a != 1 || b != 2 {
		t.Errorf("a=%d b=%d, want 1 2", a, b)
	}
}

func TestName(t *testing.T) {
	p := NewPin(17, nil)
	if p.Name() != "GPIO17" || p.Number() != 17 || p.String() != "GPIO17" {
		t.Errorf("Name %q Number %d", p.Name(), p.Number())
	}
}

// With recording off an output still drives its level, and Outs stays
// empty.
func TestOutWithoutRecording(t *testing.T) {
	p := NewPin(5, nil)
	p.SetRecording(false)
	_ = p.Out(gpio.High)
	if p.Read() != gpio.High || len(p.Outs()) != 0 {
		t.Errorf("level %v, %d outputs recorded", p.Read(), len(p.Outs()))
	}
	p.SetRecording(true)
	_ = p.Out(gpio.Low)
	if o := p.Outs(); len(o) != 1 || o[0].Level != gpio.Low {
		t.Errorf("recording back on: outs %+v", o)
	}
}
