//go:build hardware

package smoketest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/socketcan"
)

// TestSendReceive sends standard and extended frames on one socket and reads
// them on a second socket of the same interface, which the kernel gives
// every frame that left the controller.
func TestSendReceive(t *testing.T) {
	iface := os.Getenv("SAINT_SMOKE_CAN")
	if iface == "" {
		iface = "can0"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tx, err := socketcan.Open(ctx, iface, nil)
	if err != nil {
		t.Skip(err)
	}
	defer tx.Close()
	rx, err := socketcan.Open(ctx, iface, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	got := make(chan can.Frame, 16)
	stop := rx.Receive(func(f can.Frame, _ time.Time) { got <- f })
	defer stop()
	want := []can.Frame{
		{ID: 0x123, Length: 3, Data: [8]byte{1, 2, 3}},
		{ID: 0x1ABCDE, Extended: true, Length: 8, Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, f := range want {
		if err := tx.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range want {
		select {
		case f := <-got:
			if f != w {
				t.Errorf("received %+v, want %+v", f, w)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("frame %+v never came back: is %s up, with loopback on or another node to acknowledge?", w, iface)
		}
	}
}
