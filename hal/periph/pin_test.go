package periph

import (
	"strings"
	"testing"
	"time"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/gpio"
)

// guard bounds a wait on the watch goroutine so a broken watch fails the
// test instead of hanging it; it is not a timing assertion.
const guard = 10 * time.Second

func TestPinPullAndLevel(t *testing.T) {
	for _, tc := range []struct {
		pull gpio.Pull
		want pgpio.Pull
	}{
		{gpio.PullNoChange, pgpio.PullNoChange},
		{gpio.Float, pgpio.Float},
		{gpio.PullDown, pgpio.PullDown},
		{gpio.PullUp, pgpio.PullUp},
	} {
		fake := &gpiotest.Pin{N: "GPIO17", Num: 17}
		p := NewPin(fake, 17, nil)
		if err := p.In(tc.pull, gpio.NoEdge); err != nil {
			t.Fatalf("In(%v): %v", tc.pull, err)
		}
		if fake.P != tc.want {
			t.Errorf("In(%v) set periph pull %v, want %v", tc.pull, fake.P, tc.want)
		}
	}

	fake := &gpiotest.Pin{N: "GPIO17", Num: 17}
	p := NewPin(fake, 17, nil)
	if p.Name() != "GPIO17" || p.Number() != 17 {
		t.Errorf("Name, Number = %q, %d, want GPIO17, 17", p.Name(), p.Number())
	}
	// gpiotest pulls the level the way its pull resistor would.
	if err := p.In(gpio.PullUp, gpio.NoEdge); err != nil {
		t.Fatal(err)
	}
	if p.Read() != gpio.High {
		t.Errorf("input pulled up reads %v, want high", p.Read())
	}
	for _, l := range []gpio.Level{gpio.High, gpio.Low} {
		if err := p.Out(l); err != nil {
			t.Fatal(err)
		}
		if fake.L != pgpio.Level(l) {
			t.Errorf("Out(%v) drove %v", l, fake.L)
		}
	}
}

func TestPinErrorsNameThePin(t *testing.T) {
	p := NewPin(&gpiotest.Pin{N: "GPIO17", Num: 17}, 17, nil)
	// gpiotest refuses edge detection without an edge channel.
	err := p.In(gpio.PullUp, gpio.BothEdges)
	if err == nil || !strings.Contains(err.Error(), "GPIO17") {
		t.Errorf("In with edges on a pin that cannot detect them: %v, want an error naming GPIO17", err)
	}
	if err := p.In(gpio.Pull(42), gpio.NoEdge); err == nil || !strings.Contains(err.Error(), "pull 42") {
		t.Errorf("In(pull 42) = %v, want an error naming the pull", err)
	}
	if err := p.In(gpio.PullUp, gpio.Edge(9)); err == nil || !strings.Contains(err.Error(), "edge 9") {
		t.Errorf("In(edge 9) = %v, want an error naming the edge", err)
	}
}

// watch collects the edges of p on a channel.
func watch(p *Pin) (<-chan gpio.EdgeEvent, func()) {
	events := make(chan gpio.EdgeEvent, 16)
	stop := p.WatchEdges(func(e gpio.EdgeEvent) { events <- e })
	return events, stop
}

func next(t *testing.T, events <-chan gpio.EdgeEvent) gpio.EdgeEvent {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(guard):
		t.Fatal("no edge reported")
	}
	return gpio.EdgeEvent{}
}

func TestWatchEdgesStampsEachEdge(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	fake := &gpiotest.Pin{N: "GPIO22", Num: 22, EdgesChan: make(chan pgpio.Level)}
	p := NewPin(fake, 22, clk)
	if err := p.In(gpio.PullUp, gpio.BothEdges); err != nil {
		t.Fatal(err)
	}
	events, stop := watch(p)
	// An RC pulse: falling at t0, rising 1500 µs later. Each send returns
	// once the watch has taken the edge, and the clock moves only after the
	// event is back, so each stamp is exactly the clock at its edge.
	t0 := clk.Now()
	fake.EdgesChan <- pgpio.Low
	e1 := next(t, events)
	clk.Advance(1500 * time.Microsecond)
	fake.EdgesChan <- pgpio.High
	e2 := next(t, events)
	if e1.Level != gpio.Low || !e1.Time.Equal(t0) {
		t.Errorf("first edge %v at %v, want low at %v", e1.Level, e1.Time, t0)
	}
	if e2.Level != gpio.High || e2.Time.Sub(e1.Time) != 1500*time.Microsecond {
		t.Errorf("second edge %v, %v after the first; want high, 1.5ms", e2.Level, e2.Time.Sub(e1.Time))
	}
	stop()
	stop() // a second stop is harmless
	// stop has waited for the watch goroutine: nobody takes edges any more.
	select {
	case fake.EdgesChan <- pgpio.Low:
		t.Error("an edge was taken after stop")
	default:
	}
	if len(events) != 0 {
		t.Errorf("%d events after stop", len(events))
	}
}

func TestWatchOneEdgeReportsItsLevel(t *testing.T) {
	for _, tc := range []struct {
		edge gpio.Edge
		want gpio.Level
	}{
		{gpio.RisingEdge, gpio.High},
		{gpio.FallingEdge, gpio.Low},
	} {
		fake := &gpiotest.Pin{N: "GPIO5", Num: 5, EdgesChan: make(chan pgpio.Level)}
		p := NewPin(fake, 5, clock.NewVirtual(clock.Epoch()))
		if err := p.In(gpio.PullUp, tc.edge); err != nil {
			t.Fatal(err)
		}
		events, stop := watch(p)
		// The fake takes whatever level it is fed; the adapter reports the
		// edge's own level without reading the pin back, as a single-edge
		// watch on hardware must (the pin may have moved on since).
		fake.EdgesChan <- !pgpio.Level(tc.want)
		if e := next(t, events); e.Level != tc.want {
			t.Errorf("edge %v reported %v, want %v", tc.edge, e.Level, tc.want)
		}
		stop()
	}
}

func TestWatchWaitsForIn(t *testing.T) {
	fake := &gpiotest.Pin{N: "GPIO6", Num: 6, EdgesChan: make(chan pgpio.Level)}
	p := NewPin(fake, 6, clock.NewVirtual(clock.Epoch()))
	events, stop := watch(p)
	defer stop()
	// Watching starts before edges are selected; the edge after In arrives.
	if err := p.In(gpio.Float, gpio.FallingEdge); err != nil {
		t.Fatal(err)
	}
	select {
	case fake.EdgesChan <- pgpio.Low:
	case <-time.After(guard):
		t.Fatal("the watch never took the edge")
	}
	if e := next(t, events); e.Level != gpio.Low {
		t.Errorf("edge level %v, want low", e.Level)
	}
}
