package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/fixtures"
	saintserver "github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/livelink"
)

// TestLiveLinkSenderMustBeAllowed runs the simulated robot with
// authentication on, so that a Live Link Face sender on 127.0.0.1 is a
// sender like any other: the simulated head does not follow it until it
// is allowed, follows it then, and stops following once it is revoked.
func TestLiveLinkSenderMustBeAllowed(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	st, err := stack.New(stack.Options{LiveLink: saintserver.LiveLinkOptions{FaceAddr: "127.0.0.1:0"}, Speed: 1, ConfigDir: cfg, DataDir: filepath.Join(root, "data"), RequireAuth: true,
		HTTPAddr: "127.0.0.1:0", WSAddr: "127.0.0.1:0", Seed: 1, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = st.Exec.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }()
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	defer st.Shutdown()
	var adoptErr error
	if err := st.Exec.Do(ctx, func() { adoptErr = st.AdoptAll([]string{"head"}) }); err != nil || adoptErr != nil {
		t.Fatal(err, adoptErr)
	}
	c := newAPI(t, "ws://"+st.Server.Addrs()["ws"]+"/saint")
	auth, _ := json.Marshal(map[string]any{"id": "auth", "type": "auth", "token": st.Server.Token()})
	if r, err := c.roundTrip(auth, json.RawMessage(`"auth"`)); err != nil || r.Status != "ok" {
		t.Fatalf("auth: %+v %v", r, err)
	}
	if err := c.request("router", "load_preset", map[string]any{"preset_name": "facecap_head"}, nil); err != nil {
		t.Fatal(err)
	}

	conn, err := net.Dial("udp", st.Server.LiveLinkAddrs().Face)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var mu sync.Mutex
	yaw := float32(20)
	stop, sent := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sent)
		p := livelink.FacePacket{DeviceID: "1EACAA6D-D06B-4A50-9463-283791062EB9", Subject: "FaceCapture", RateNumerator: 60, RateDenominator: 1}
		tick := time.NewTicker(time.Second / 60)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock()
			p.Values[52] = yaw * math.Pi / 180 // HeadYaw, radians
			mu.Unlock()
			p.FrameNumber++
			_, _ = conn.Write(livelink.AppendFacePacket(nil, &p))
		}
	}()
	defer func() { close(stop); <-sent }()

	pan := func() float64 {
		var a float64
		if err := st.Exec.Do(context.Background(), func() { a = st.Robot.Head.Angles()[0] * 180 / math.Pi }); err != nil {
			t.Fatal(err)
		}
		return a
	}
	senders := func() livelink.SenderList {
		var l livelink.SenderList
		if err := c.request("livelink", "list_senders", map[string]any{}, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	// holds checks for a second that the head stays within 2° of want.
	holds := func(want float64, when string) {
		t.Helper()
		// A hold: the pan is checked throughout the second.
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if p := pan(); math.Abs(p-want) > 2 {
				t.Fatalf("%s: the head turned to %.2f°, want it to stay at %v°", when, p, want)
			}
		}
	}
	follows := func(want float64) {
		t.Helper()
		bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
			if p := pan(); math.Abs(p-want) > 2 {
				return fmt.Errorf("simulated head pan %.2f°, want %v°", p, want)
			}
			return nil
		})
	}

	// 1. Not allowed: listed, and the head does not move.
	bustest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if l := senders(); len(l.Unknown) != 1 || l.Unknown[0].Address != "127.0.0.1" || l.Unknown[0].Packets < 10 {
			return fmt.Errorf("senders %+v", l)
		}
		return nil
	})
	holds(0, "an unknown sender")

	// 2. Allowed: the head follows.
	if err := c.request("livelink", "allow_sender", map[string]any{"address": "127.0.0.1"}, nil); err != nil {
		t.Fatal(err)
	}
	follows(20)

	// 3. Revoked: a new yaw moves nothing.
	if err := c.request("livelink", "revoke_sender", map[string]any{"address": "127.0.0.1"}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	yaw = -15
	mu.Unlock()
	holds(20, "a revoked sender")
}
