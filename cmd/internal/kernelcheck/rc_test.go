package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// feedRC starts a receiver twin sending sent on one end of a port pair and
// returns the other end.
func feedRC(t *testing.T, proto rc.Protocol, sent []uint16) *uarttest.Port {
	t.Helper()
	ex := bustest.RunExecutor(t)
	tx, rx := uarttest.Pipe(clock.Real{})
	rx.SetRecording(false)
	tx.SetRecording(false)
	s, err := rctx.NewSerial(ex, tx, proto, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for i, us := range sent {
		if err := s.Set(i+1, us); err != nil {
			t.Fatal(err)
		}
	}
	return rx
}

func TestRCCheckDecodesWhatTheReceiverSends(t *testing.T) {
	sent := []uint16{1000, 1100, 1234, 1500, 1777, 2000}
	for _, proto := range []rc.Protocol{rc.SBUS, rc.CRSF} {
		port := feedRC(t, proto, sent)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		detail, err := checkRC(ctx, port, proto, sent)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if !strings.Contains(detail, "20 "+string(proto)+" frames") {
			t.Errorf("%s: detail %q", proto, detail)
		}
		if got := port.Config(); got.Baud != map[rc.Protocol]int{rc.SBUS: 100000, rc.CRSF: 420000}[proto] {
			t.Errorf("%s: port configured %+v", proto, got)
		}
	}
}

func TestRCCheckFailsOnOtherChannels(t *testing.T) {
	port := feedRC(t, rc.SBUS, []uint16{1000, 1500})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := checkRC(ctx, port, rc.SBUS, []uint16{1000, 1600})
	if err == nil || !strings.Contains(err.Error(), "0 sbus frames with channels [1000 1600]") {
		t.Errorf("checkRC against other channels = %v, want no matching frames reported", err)
	}
}

// The channels expected are the ones the protocol can carry: SBUS's 11-bit
// values are 0.625 µs apart, so 1234 µs arrives as 1233.
func TestWireChannels(t *testing.T) {
	got, err := wireChannels(rc.SBUS, []uint16{1000, 1234, 1500, 2000})
	if err != nil {
		t.Fatal(err)
	}
	for i, us := range got {
		if back := rc.SBUSToMicros(rc.MicrosToSBUS(us)); back != us {
			t.Errorf("channel %d: %d µs does not survive SBUS (%d)", i+1, us, back)
		}
	}
	if _, err := wireChannels(rc.IBUS, []uint16{1500}); err == nil {
		t.Error("wireChannels(ibus) succeeded, want an error: the check speaks sbus and crsf")
	}
}
