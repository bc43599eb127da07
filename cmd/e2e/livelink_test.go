package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/fixtures"
	saintserver "github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/livelink"
)

// captureFile is the real Live Link Face capture.
const captureFile = "../../fixtures/livelink/live-link-face-capture.udp"

// request sends a WebSocket API request of any type and returns its data;
// a status other than "ok" is an error.
func (c *api) request(typ, action string, params, out any) error {
	c.seq++
	id := fmt.Sprintf("e2e-%d", c.seq)
	raw, err := json.Marshal(map[string]any{"id": id, "type": typ, "action": action, "params": params})
	if err != nil {
		return err
	}
	r, err := c.roundTrip(raw, json.RawMessage(strconv.Quote(id)))
	if err != nil {
		return fmt.Errorf("%s %s: %w", typ, action, err)
	}
	if r.Status != "ok" {
		return fmt.Errorf("%s %s: status %q, message %q", typ, action, r.Status, r.Message)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// TestLiveLinkFaceMovesHead runs the whole simulated robot (server, physics,
// the head node in its role) with the server's Live Link Face port on
// 127.0.0.1, and drives it from outside as the app would: UDP datagrams in,
// the WebSocket API and the simulated head's ground truth observed.
func TestLiveLinkFaceMovesHead(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "config")
	if err := fixtures.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	st, err := stack.New(stack.Options{LiveLink: saintserver.LiveLinkOptions{FaceAddr: "127.0.0.1:0"}, Speed: 1, ConfigDir: cfg, DataDir: filepath.Join(root, "data"),
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

	// What the router commands the head.
	var mu sync.Mutex
	var cmd *msg.HeadCommand
	tap := st.Broker.Connect(nil)
	defer tap.Close()
	if _, err := bus.SubscribeJSON(tap, msg.TopicHeadCmd, bus.QoS{}, st.Exec, func(_ string, c msg.HeadCommand) {
		mu.Lock()
		cmd = &c
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}

	face := st.Server.LiveLinkAddrs().Face
	if face == "" {
		t.Fatal("the LiveLink receiver is not listening")
	}
	ua, err := net.ResolveUDPAddr("udp", face)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := newAPI(t, "ws://"+st.Server.Addrs()["ws"]+"/saint")

	// 1. The capture's first packets, as recorded: the app's subject shows
	// in list_livelink_sources.
	data, err := os.ReadFile(captureFile)
	if err != nil {
		t.Fatal(err)
	}
	var packets []livelink.FacePacket
	for _, s := range livelink.SplitCapture(data) {
		if s.Err == nil {
			packets = append(packets, s.Packet)
		}
	}
	for _, p := range packets[:30] {
		if _, err := conn.Write(livelink.AppendFacePacket(nil, &p)); err != nil {
			t.Fatal(err)
		}
	}
	bustest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		var list struct {
			Sources []msg.LiveLinkSubject `json:"sources"`
		}
		if err := c.request("router", "list_livelink_sources", map[string]any{}, &list); err != nil {
			return err
		}
		subs := list.Sources
		for _, s := range subs {
			if s.SubjectName == "Ahmeds_iPhone" && s.SubjectType == msg.SubjectFace && s.SourceIP == "127.0.0.1" &&
				len(s.Properties) == livelink.FaceBlendShapeCount && s.Properties[52] == "HeadYaw" {
				return nil
			}
		}
		return fmt.Errorf("list_livelink_sources: %+v", subs)
	})
	var one msg.LiveLinkSubject
	if err := c.request("router", "get_livelink_subject", map[string]any{"subject_name": "Ahmeds_iPhone"}, &one); err != nil || one.LastFrame == 0 {
		t.Fatalf("get_livelink_subject: %+v %v", one, err)
	}

	// 2. With facecap_head loaded, the app (its subject named FaceCapture,
	// as the preset expects) turns the head: pan follows headYaw.
	if err := c.request("router", "load_preset", map[string]any{"preset_name": "facecap_head"}, nil); err != nil {
		t.Fatal(err)
	}
	var yaw sync.Mutex
	// Live Link Face sends head rotation in radians; the preset turns it
	// into the head's degrees.
	headYaw := float32(0)
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		tick := time.NewTicker(time.Second / 60)
		defer tick.Stop()
		p := livelink.FacePacket{DeviceID: packets[0].DeviceID, Subject: "FaceCapture", FrameNumber: packets[0].FrameNumber,
			RateNumerator: 60, RateDenominator: 1}
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			yaw.Lock()
			p.Values[52] = headYaw // HeadYaw; everything else neutral
			yaw.Unlock()
			p.FrameNumber++
			_, _ = conn.Write(livelink.AppendFacePacket(nil, &p))
		}
	}()
	defer func() { close(stop); <-sent }()

	follow := func(want float32) {
		t.Helper()
		yaw.Lock()
		headYaw = want * math.Pi / 180
		yaw.Unlock()
		bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
			mu.Lock()
			defer mu.Unlock()
			if cmd == nil || math.Abs(float64(cmd.Pan-want)) > 0.05 || math.Abs(float64(cmd.Tilt)) > 0.01 {
				return fmt.Errorf("head command %+v, want pan %v", cmd, want)
			}
			return nil
		})
		bustest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
			var pan float64
			if err := st.Exec.Do(context.Background(), func() { pan = st.Robot.Head.Angles()[0] * 180 / math.Pi }); err != nil {
				return err
			}
			if math.Abs(pan-float64(want)) > 2 {
				return fmt.Errorf("simulated head pan %.2f°, want %v°", pan, want)
			}
			return nil
		})
	}
	follow(20)
	follow(-15)
}
