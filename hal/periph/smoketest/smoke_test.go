//go:build hardware

package smoketest

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/periph"
)

func envPin(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: want a BCM number", name, s)
	}
	return n
}

func openHost(t *testing.T) *periph.Host {
	t.Helper()
	h, err := periph.Open(nil)
	if errors.Is(err, periph.ErrNoGPIOChip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestGPIOLoopback drives the output pin and reads it back on the input pin
// it is jumpered to, then counts the edges it sees.
func TestGPIOLoopback(t *testing.T) {
	h := openHost(t)
	out, err := h.GPIO(envPin(t, "SAINT_SMOKE_OUT", 23))
	if err != nil {
		t.Fatal(err)
	}
	in, err := h.GPIO(envPin(t, "SAINT_SMOKE_IN", 24))
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Out(gpio.Low); err != nil {
		t.Fatal(err)
	}
	if err := in.In(gpio.PullDown, gpio.BothEdges); err != nil {
		t.Fatal(err)
	}
	events := make(chan gpio.EdgeEvent, 64)
	stop := in.WatchEdges(func(e gpio.EdgeEvent) { events <- e })
	defer stop()
	for _, l := range []gpio.Level{gpio.High, gpio.Low, gpio.High, gpio.Low} {
		if err := out.Out(l); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-events:
			if e.Level != l {
				t.Errorf("drove %v, edge reported %v", l, e.Level)
			}
			if got := in.Read(); got != l {
				t.Errorf("drove %v, read %v: is %s jumpered to %s?", l, got, out, in)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("drove %v, no edge on %s: is it jumpered to %s?", l, in, out)
		}
	}
}

// TestHardwarePWM runs 1 kHz at 25 % on the PWM pin and checks the input it
// is jumpered to sees edges about a millisecond apart.
func TestHardwarePWM(t *testing.T) {
	h := openHost(t)
	w, err := h.PWM(envPin(t, "SAINT_SMOKE_PWM", 18))
	if err != nil {
		t.Skip(err)
	}
	in, err := h.GPIO(envPin(t, "SAINT_SMOKE_IN", 24))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.In(gpio.PullDown, gpio.RisingEdge); err != nil {
		t.Fatal(err)
	}
	events := make(chan gpio.EdgeEvent, 1024)
	stop := in.WatchEdges(func(e gpio.EdgeEvent) {
		select {
		case events <- e:
		default:
		}
	})
	if err := w.PWM(0.25, 1000); err != nil {
		t.Fatal(err)
	}
	// Half a second of PWM is the stimulus whose edges are counted.
	time.Sleep(500 * time.Millisecond)
	stop()
	if err := w.Halt(); err != nil {
		t.Error(err)
	}
	n := len(events)
	t.Logf("%d rising edges in 500 ms at 1 kHz", n)
	if n < 100 {
		t.Errorf("saw %d rising edges, want hundreds: is the PWM pin jumpered to the input?", n)
	}
}

// TestI2CScan probes bus 1 as i2cdetect -r does and lists what answers.
func TestI2CScan(t *testing.T) {
	h := openHost(t)
	b, err := h.I2C(1)
	if err != nil {
		t.Skip(err)
	}
	defer b.Close()
	var found []uint16
	r := make([]byte, 1)
	for addr := uint16(0x03); addr <= 0x77; addr++ {
		if b.Tx(addr, nil, r) == nil {
			found = append(found, addr)
		}
	}
	t.Logf("I²C bus 1 answers at %#02x", found)
	if s := os.Getenv("SAINT_SMOKE_I2C_ADDR"); s != "" {
		want, err := strconv.ParseUint(s, 0, 7)
		if err != nil {
			t.Fatalf("SAINT_SMOKE_I2C_ADDR=%q: %v", s, err)
		}
		for _, a := range found {
			if a == uint16(want) {
				return
			}
		}
		t.Errorf("nothing answered at %#02x", want)
	}
}
