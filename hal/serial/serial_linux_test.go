package serial

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	bugserial "go.bug.st/serial"
	"golang.org/x/sys/unix"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/serial/serialtest"
	"github.com/saint-os/saint/hal/uart"
)

// guard bounds waits on the reader goroutine; it is not a timing assertion.
const guard = 10 * time.Second

func TestToMode(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    uart.Config
		want bugserial.Mode
	}{
		{"SBUS behind an inverter", uart.Config{Baud: 100000, Parity: uart.EvenParity, StopBits: 2, Inverted: true},
			bugserial.Mode{BaudRate: 100000, DataBits: 8, Parity: bugserial.EvenParity, StopBits: bugserial.TwoStopBits}},
		{"CRSF", uart.Config{Baud: 420000},
			bugserial.Mode{BaudRate: 420000, DataBits: 8, Parity: bugserial.NoParity, StopBits: bugserial.OneStopBit}},
		{"7O1", uart.Config{Baud: 9600, DataBits: 7, Parity: uart.OddParity, StopBits: 1},
			bugserial.Mode{BaudRate: 9600, DataBits: 7, Parity: bugserial.OddParity, StopBits: bugserial.OneStopBit}},
	} {
		m, err := toMode(tc.c, true)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if *m != tc.want {
			t.Errorf("%s: mode %+v, want %+v", tc.name, *m, tc.want)
		}
	}
	for _, tc := range []struct {
		c    uart.Config
		want string
	}{
		{uart.Config{}, "baud rate 0"},
		{uart.Config{Baud: 9600, DataBits: 9}, "data bits 9"},
		{uart.Config{Baud: 9600, StopBits: 3}, "stop bits 3"},
		{uart.Config{Baud: 9600, Parity: uart.Parity(7)}, "parity 7"},
		{uart.Config{Baud: 100000, Parity: uart.EvenParity, StopBits: 2, Inverted: true}, "hardware inverter"},
	} {
		if _, err := toMode(tc.c, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("toMode(%+v) = %v, want an error about %q", tc.c, err, tc.want)
		}
	}
}

func TestOpenMissingDevice(t *testing.T) {
	_, err := Open("/dev/ttyNOPE", nil)
	if err == nil || !strings.Contains(err.Error(), "/dev/ttyNOPE") {
		t.Errorf("Open of a missing device = %v, want an error naming it", err)
	}
}

// collector gathers what a Port receives.
type collector struct {
	mu    sync.Mutex
	bytes []byte
	at    []time.Time // one stamp per received byte
}

func (c *collector) add(p []byte, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes = append(c.bytes, p...)
	for range p {
		c.at = append(c.at, at)
	}
}

func (c *collector) waitFor(t *testing.T, n int) ([]byte, []time.Time) {
	t.Helper()
	bustest.CheckFor(t, guard, time.Millisecond, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.bytes) < n {
			return io.ErrShortBuffer
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.bytes...), append([]time.Time(nil), c.at...)
}

func TestBytesBothWaysOnAPseudoTerminal(t *testing.T) {
	master, slave := serialtest.OpenPTY(t)
	clk := clock.NewVirtual(clock.Epoch())
	sbus := uart.Config{Baud: 100000, Parity: uart.EvenParity, StopBits: 2, Inverted: true}
	p, err := Open(slave, &Options{Config: sbus, Clock: clk, HardwareInverter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// The line settings reached the device. A pty keeps the stop bits, but
	// may ignore the baud rate and always drops parity, so those are only
	// reported.
	tio := slaveTermios(t, master)
	if tio.Cflag&unix.CSTOPB == 0 || tio.Cflag&unix.CSIZE != unix.CS8 {
		t.Errorf("slave cflag %#o: want CS8 and CSTOPB for 8E2", tio.Cflag)
	}
	t.Logf("pty after 100000 8E2: speed %d, parity enabled %v", slaveSpeed(t, master), tio.Cflag&unix.PARENB != 0)

	var got collector
	stop := p.Receive(got.add)
	defer stop()

	// Device to Pi: an SBUS frame (header 0x0F, 22 channel bytes, flags,
	// footer), then 14 ms later the next.
	frame := append(append([]byte{0x0F}, bytes.Repeat([]byte{0xA5}, 22)...), 0x00, 0x00)
	t0 := clk.Now()
	if _, err := master.Write(frame); err != nil {
		t.Fatal(err)
	}
	got.waitFor(t, len(frame))
	clk.Advance(14 * time.Millisecond)
	if _, err := master.Write(frame); err != nil {
		t.Fatal(err)
	}
	b, at := got.waitFor(t, 2*len(frame))
	if !bytes.Equal(b, append(append([]byte(nil), frame...), frame...)) {
		t.Errorf("received % x", b)
	}
	for i, s := range at {
		want := t0
		if i >= len(frame) {
			want = t0.Add(14 * time.Millisecond)
		}
		if !s.Equal(want) {
			t.Errorf("byte %d stamped %v, want %v", i, s, want)
			break
		}
	}

	// Pi to device: CRSF at 420000 8N1 on the same port.
	if err := p.Configure(uart.Config{Baud: 420000}); err != nil {
		t.Fatalf("Configure(420000 8N1): %v", err)
	}
	if tio := slaveTermios(t, master); tio.Cflag&unix.CSTOPB != 0 {
		t.Errorf("slave cflag %#o still has two stop bits after 8N1", tio.Cflag)
	}
	// A CRSF link-statistics frame header: address, length, type.
	out := []byte{0xC8, 0x0C, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x5A}
	if n, err := p.Write(out); err != nil || n != len(out) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	back := make([]byte, len(out))
	if _, err := io.ReadFull(master, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, out) {
		t.Errorf("device read % x, want % x", back, out)
	}
}

func TestInvertedNeedsAnInverter(t *testing.T) {
	_, slave := serialtest.OpenPTY(t)
	p, err := Open(slave, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	err = p.Configure(uart.Config{Baud: 100000, Parity: uart.EvenParity, StopBits: 2, Inverted: true})
	if !errors.Is(err, ErrInverted) || !strings.Contains(err.Error(), slave) {
		t.Errorf("Configure(inverted) without an inverter = %v, want ErrInverted naming %s", err, slave)
	}
}

func TestStopAndClose(t *testing.T) {
	master, slave := serialtest.OpenPTY(t)
	p, err := Open(slave, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first, second collector
	stopFirst := p.Receive(first.add)
	stopSecond := p.Receive(second.add)
	defer stopSecond()
	if _, err := master.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	first.waitFor(t, 1)
	second.waitFor(t, 1)
	stopFirst()
	if _, err := master.Write([]byte{2}); err != nil {
		t.Fatal(err)
	}
	second.waitFor(t, 2)
	// The second receiver has the byte, so the reader is past it.
	if b, _ := first.waitFor(t, 1); len(b) != 1 {
		t.Errorf("stopped receiver got % x", b)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if p.Err() != nil {
		t.Errorf("Err after Close = %v, want nil: closing is not a failure", p.Err())
	}
}
