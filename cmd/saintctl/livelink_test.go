package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/server/inputs/livelink"
)

const captureFile = "../../fixtures/livelink/live-link-face-capture.udp"

// collect is a writer keeping each write.
type collect struct{ writes [][]byte }

func (c *collect) Write(b []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), b...))
	return len(b), nil
}

func TestReplaySchedule(t *testing.T) {
	data, err := os.ReadFile(captureFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newReplay(data, "")
	if err != nil {
		t.Fatal(err)
	}
	first, last := r.packets[0], r.packets[len(r.packets)-1]
	// The capture's span from its frame times: no jump in it is longer
	// than a second, so the replay keeps every gap.
	span := (float64(last.FrameNumber) + float64(last.SubFrame) - float64(first.FrameNumber) - float64(first.SubFrame)) / 60
	for _, speed := range []float64{1, 2.5} {
		var moments []time.Time
		w := &collect{}
		sleep := func(_ context.Context, t time.Time) error { moments = append(moments, t); return nil }
		n, err := r.run(context.Background(), w, speed, false, sleep)
		if err != nil || n != len(r.packets) || len(w.writes) != n {
			t.Fatalf("speed %v: sent %d of %d: %v", speed, n, len(r.packets), err)
		}
		got := moments[len(moments)-1].Sub(moments[0]).Seconds()
		if want := span / speed; got < want-0.001 || got > want+0.001 {
			t.Errorf("speed %v: replay lasts %.4f s, want %.4f s", speed, got, want)
		}
		for i := 1; i < len(moments); i++ {
			if moments[i].Before(moments[i-1]) {
				t.Fatalf("moment %d before %d", i, i-1)
			}
		}
		// The bytes are the capture's good packets, unchanged.
		i := 0
		for _, s := range livelink.SplitCapture(data) {
			if s.Err == nil {
				if !bytes.Equal(w.writes[i], s.Bytes) {
					t.Fatalf("packet %d differs from the capture", i)
				}
				i++
			}
		}
	}
	// Loop: the second pass starts one frame after the end of the first.
	var moments []time.Time
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, t time.Time) error {
		moments = append(moments, t)
		if len(moments) == len(r.packets)+2 {
			cancel()
		}
		return ctx.Err()
	}
	n, err := r.run(ctx, &collect{}, 1, true, sleep)
	if err == nil || n != len(r.packets)+1 {
		t.Fatalf("loop: sent %d, err %v", n, err)
	}
	if d := moments[len(r.packets)].Sub(moments[len(r.packets)-1]); d != time.Second/60 {
		t.Errorf("loop gap %v, want one frame", d)
	}
}

func TestReplayCommand(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Room for the whole capture, so a reader slowed by a busy machine
	// loses nothing (the kernel caps this at net.core.rmem_max).
	_ = l.SetReadBuffer(4 << 20)
	var mu sync.Mutex
	var got []livelink.FacePacket
	var bad int
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, _, err := l.ReadFromUDP(buf)
			if err != nil {
				return
			}
			p, err := livelink.ParseFacePacket(buf[:n])
			mu.Lock()
			if err != nil {
				bad++
			} else {
				got = append(got, p)
			}
			mu.Unlock()
		}
	}()
	var out strings.Builder
	if err := run([]string{"livelink", "replay", captureFile, "--to", l.LocalAddr().String(), "--speed", "20", "--subject", "FaceCapture"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "560 packets") || !strings.Contains(out.String(), "518 bytes rejected") {
		t.Errorf("output %q", out.String())
	}
	// UDP may drop a datagram on a busy machine even on loopback (the
	// receive buffer is capped by net.core.rmem_max), so what is asserted
	// exactly is what replay says it sent; what arrives must be nearly all
	// of it, in order and renamed.
	const sent, mustArrive = 560, 540
	// Wait for the stragglers: until all arrived, or nothing more came for
	// half a second.
	last, quiet := -1, time.Now()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == sent {
			break
		}
		if n != last {
			last, quiet = n, time.Now()
		} else if time.Since(quiet) > 500*time.Millisecond {
			break
		}
	}
	_ = l.Close()
	<-done
	if len(got) < mustArrive || len(got) > sent || bad != 0 {
		t.Fatalf("received %d packets (%d bad), want %d (at least %d)", len(got), bad, sent, mustArrive)
	}
	for i, p := range got {
		if p.Subject != "FaceCapture" || i > 0 && p.FrameNumber <= got[i-1].FrameNumber {
			t.Fatalf("packet %d: %s frame %d", i, p.Subject, p.FrameNumber)
		}
	}
	if err := run([]string{"livelink", "replay", captureFile}, &out); err == nil {
		t.Error("replay without --to accepted")
	}
}
