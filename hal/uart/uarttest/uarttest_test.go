package uarttest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/uart"
)

func TestInjectKeepsArrivalTimes(t *testing.T) {
	p := NewPort(nil)
	var got []Chunk
	p.Receive(func(b []byte, at time.Time) { got = append(got, Chunk{b, at}) })
	t0 := clock.Epoch()
	// Two SBUS frames 7 ms apart: the decoder finds frames by the gap.
	p.Inject([]byte{0x0F, 0x00}, t0)
	p.Inject([]byte{0x0F, 0x01}, t0.Add(7*time.Millisecond))
	if len(got) != 2 || got[1].Time.Sub(got[0].Time) != 7*time.Millisecond {
		t.Fatalf("got %v", got)
	}
	p.Inject(nil, t0)
	if len(got) != 2 {
		t.Error("empty Inject delivered")
	}
}

func TestPipe(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	a, b := Pipe(clk)
	var atB []byte
	var when time.Time
	stop := b.Receive(func(p []byte, at time.Time) { atB = append(atB, p...); when = at })
	clk.Advance(time.Second)
	// Feetech PING to servo 1.
	ping := []byte{0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB}
	if n, err := a.Write(ping); n != len(ping) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if !bytes.Equal(atB, ping) || !when.Equal(clock.Epoch().Add(time.Second)) {
		t.Errorf("b received %x at %v", atB, when)
	}
	stop()
	stop()
	_, _ = a.Write([]byte{1})
	if len(atB) != len(ping) {
		t.Error("stopped receiver still received")
	}
	var atA []byte
	a.Receive(func(p []byte, _ time.Time) { atA = append(atA, p...) })
	_, _ = b.Write([]byte{0xAA})
	if !bytes.Equal(atA, []byte{0xAA}) {
		t.Errorf("a received %x, want aa", atA)
	}
	if w := a.Written(); !bytes.Equal(w, append(append([]byte(nil), ping...), 1)) {
		t.Errorf("a.Written() = %x", w)
	}
	if ws := a.Writes(); len(ws) != 2 {
		t.Errorf("a.Writes() has %d chunks, want 2", len(ws))
	}
}

func TestReceiverGetsACopy(t *testing.T) {
	p := NewPort(nil)
	var kept []byte
	p.Receive(func(b []byte, _ time.Time) { kept = b })
	buf := []byte{1, 2, 3}
	p.Inject(buf, time.Time{})
	buf[0] = 9
	if kept[0] != 1 {
		t.Error("receiver's bytes changed with the caller's buffer")
	}
}

func TestConfigure(t *testing.T) {
	p := NewPort(nil)
	sbus := uart.Config{Baud: 100000, Parity: uart.EvenParity, StopBits: 2, Inverted: true}
	if err := p.Configure(sbus); err != nil {
		t.Fatal(err)
	}
	if p.Config() != sbus {
		t.Errorf("Config() = %+v, want %+v", p.Config(), sbus)
	}
	for _, bad := range []uart.Config{
		{Baud: 0}, {Baud: 9600, DataBits: 9}, {Baud: 9600, StopBits: 3}, {Baud: 9600, Parity: 7},
	} {
		if err := p.Configure(bad); err == nil {
			t.Errorf("Configure(%+v) succeeded", bad)
		}
	}
	if p.Config() != sbus {
		t.Error("a rejected Configure changed the settings")
	}
}

// With recording off a Pipe still carries every byte, a receiver still
// gets its own copy, and nothing is kept.
func TestPipeWithoutRecording(t *testing.T) {
	a, b := Pipe(nil)
	a.SetRecording(false)
	var got []byte
	var kept []byte
	b.Receive(func(p []byte, _ time.Time) { got = append(got, p...); kept = p })
	buf := []byte{1, 2, 3}
	_, _ = a.Write(buf)
	buf[0] = 9
	if !bytes.Equal(got, []byte{1, 2, 3}) || kept[0] != 1 {
		t.Errorf("received %x (kept %x) after the writer reused its buffer", got, kept)
	}
	if len(a.Writes()) != 0 || len(a.Written()) != 0 {
		t.Errorf("recording off, yet %d writes recorded", len(a.Writes()))
	}
	a.SetRecording(true)
	_, _ = a.Write([]byte{4})
	if !bytes.Equal(a.Written(), []byte{4}) {
		t.Errorf("recording back on: Written %x, want 04", a.Written())
	}
}

// A Playback answers each scripted write with its reply, refuses a write
// the script does not expect, and Close tells a short or broken script.
func TestPlayback(t *testing.T) {
	p := &Playback{Ops: []IO{
		{W: []byte{0x01, 0x02}, R: []byte{0xAA}},
		{W: []byte{0x03}},
	}}
	var got []byte
	p.Receive(func(b []byte, _ time.Time) { got = append(got, b...) })
	if n, err := p.Write([]byte{0x01, 0x02}); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if string(got) != "\xaa" {
		t.Errorf("received % X, want AA", got)
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "1 of 2 write(s) played") {
		t.Errorf("Close with a write left = %v", err)
	}
	_, err := p.Write([]byte{0x04})
	if err == nil || err.Error() != "uarttest: write #1: want Write([0x03]), got Write([0x04])" {
		t.Errorf("mismatched Write = %v", err)
	}
	if _, err := p.Write([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	if cerr := p.Close(); cerr == nil || cerr.Error() != err.Error() {
		t.Errorf("Close = %v, want the first mismatch %v", cerr, err)
	}
	if p.Count() != 2 {
		t.Errorf("Count = %d, want 2", p.Count())
	}
}
