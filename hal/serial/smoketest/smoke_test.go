//go:build hardware

package smoketest

import (
	"bytes"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/serial"
	"github.com/saint-os/saint/hal/uart"
)

// TestLoopback sends bytes at the SBUS and CRSF settings and reads them back
// through the TX–RX jumper; at a wrong baud rate or parity they would come
// back garbled or not at all.
func TestLoopback(t *testing.T) {
	dev := os.Getenv("SAINT_SMOKE_UART")
	if dev == "" {
		dev = "/dev/serial0"
	}
	p, err := serial.Open(dev, nil)
	if err != nil {
		t.Skip(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var got []byte
	stop := p.Receive(func(b []byte, _ time.Time) {
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
	})
	defer stop()
	for _, c := range []uart.Config{
		{Baud: 100000, Parity: uart.EvenParity, StopBits: 2},
		{Baud: 420000},
		{Baud: 115200},
	} {
		if err := p.Configure(c); err != nil {
			t.Fatalf("Configure(%+v): %v", c, err)
		}
		mu.Lock()
		got = nil
		mu.Unlock()
		want := []byte{0x0F, 0x55, 0xAA, 0x00, 0xFF, 0x42}
		if _, err := p.Write(want); err != nil {
			t.Fatal(err)
		}
		var b []byte
		bustest.CheckFor(t, 2*time.Second, 10*time.Millisecond, func() error {
			mu.Lock()
			b = append([]byte(nil), got...)
			mu.Unlock()
			if len(b) < len(want) {
				return fmt.Errorf("%+v: read back % x of % x: is TX jumpered to RX?", c, b, want)
			}
			return nil
		})
		if !bytes.Equal(b, want) {
			t.Errorf("%+v: read back % x, want % x", c, b, want)
		}
	}
}
