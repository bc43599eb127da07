package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/uart"
)

// rcFrames is how many frames carrying the expected channels the RC check
// waits for.
const rcFrames = 20

// ParseChannels reads a comma-separated list of channel pulse widths, µs.
func ParseChannels(s string) ([]uint16, error) {
	var out []uint16
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16)
		if err != nil || v < 800 || v > 2200 {
			return nil, fmt.Errorf("channel %d: %q, want a pulse width of 800–2200 µs", len(out)+1, f)
		}
		out = append(out, uint16(v))
	}
	if len(out) == 0 || len(out) > rc.MaxChannels {
		return nil, fmt.Errorf("%d channels, want 1–%d", len(out), rc.MaxChannels)
	}
	return out, nil
}

// FormatChannels is ParseChannels' inverse.
func FormatChannels(us []uint16) string {
	s := make([]string, len(us))
	for i, v := range us {
		s[i] = strconv.Itoa(int(v))
	}
	return strings.Join(s, ",")
}

// wireChannels returns the pulse widths a receiver of proto delivers for
// sent: each value after the protocol's 11-bit encoding and back.
func wireChannels(proto rc.Protocol, sent []uint16) ([]uint16, error) {
	out := make([]uint16, len(sent))
	for i, us := range sent {
		switch proto {
		case rc.SBUS:
			out[i] = rc.SBUSToMicros(rc.MicrosToSBUS(us))
		case rc.CRSF:
			out[i] = rc.CRSFToMicros(rc.MicrosToCRSF(us))
		default:
			return nil, fmt.Errorf("protocol %q: the RC check speaks sbus and crsf", proto)
		}
	}
	return out, nil
}

// checkRC configures port for proto, decodes what arrives on it with
// hal/device/rc and waits for rcFrames frames whose first channels are
// sent (after the protocol's resolution).
func checkRC(ctx context.Context, port uart.Port, proto rc.Protocol, sent []uint16) (string, error) {
	want, err := wireChannels(proto, sent)
	if err != nil {
		return "", err
	}
	cfg, err := rc.PortConfig(proto)
	if err != nil {
		return "", err
	}
	if err := port.Configure(cfg); err != nil {
		return "", err
	}
	var (
		mu       sync.Mutex
		matching int
		other    int
		last     []uint16
		done     = make(chan struct{})
	)
	dec, err := rc.NewByteDecoder(proto, func(f rc.Frame) {
		mu.Lock()
		defer mu.Unlock()
		ch := f.Channels()
		if len(ch) >= len(want) && slices.Equal(ch[:len(want)], want) && !f.Failsafe && !f.FrameLost {
			matching++
			if matching == rcFrames {
				close(done)
			}
		} else {
			other++
			last = slices.Clone(ch)
		}
	})
	if err != nil {
		return "", err
	}
	// Feed runs on the port's one reader goroutine, never concurrently.
	stop := port.Receive(dec.Feed)
	select {
	case <-done:
	case <-ctx.Done():
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	st := dec.Stats()
	if matching < rcFrames {
		return "", fmt.Errorf("%d %s frames with channels %v (after %v on the wire) in time, want %d; %d other frames (last %v), %d bad frames, %d bytes discarded",
			matching, proto, want, sent, rcFrames, other, last, st.BadFrames, st.Discarded)
	}
	return fmt.Sprintf("%d %s frames decoded with channels %s µs; %d other, %d bad frames, %d bytes discarded",
		matching, proto, FormatChannels(want), other, st.BadFrames, st.Discarded), nil
}
