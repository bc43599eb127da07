package livelink

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// rig is a receiver on 127.0.0.1 with free ports, on a running wall-clock
// executor, with everything it publishes collected.
type rig struct {
	t   *testing.T
	ex  *executor.Executor
	rx  *Receiver
	mu  sync.Mutex
	fr  []msg.LiveLinkFrame
	sub []msg.LiveLinkSubject
}

func newRig(t *testing.T, mod func(*Options)) *rig {
	t.Helper()
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = ex.Run(ctx); close(done) }()
	b := mem.New()
	o := Options{Exec: ex, Bus: b, FaceAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0", DiscoveryAddr: "127.0.0.1:0",
		Name: "SAINT-TEST", AnnounceTo: []string{}, Log: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&o)
	}
	rx, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{t: t, ex: ex, rx: rx}
	deep := bus.QoS{Depth: 10000}
	if _, err := bus.SubscribeJSON(b, msg.TopicLiveLinkFrames, deep, ex, func(_ string, f msg.LiveLinkFrame) {
		g.mu.Lock()
		g.fr = append(g.fr, f)
		g.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(b, msg.TopicLiveLinkSubjects, deep, ex, func(_ string, s msg.LiveLinkSubject) {
		g.mu.Lock()
		g.sub = append(g.sub, s)
		g.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	var startErr error
	if err := ex.Do(ctx, func() { startErr = rx.Start() }); err != nil || startErr != nil {
		t.Fatal(err, startErr)
	}
	t.Cleanup(func() {
		_ = ex.Do(context.Background(), rx.Stop)
		rx.Wait()
		cancel()
		<-done
		_ = b.Close()
	})
	return g
}

func (g *rig) frames() []msg.LiveLinkFrame {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]msg.LiveLinkFrame(nil), g.fr...)
}

func dialUDP(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestReceiverCapture sends the capture's datagrams (good packets and the
// seven short ones) to the UDP port: every good one becomes a frame on
// the bus, in order, and the short ones are counted.
func TestReceiverCapture(t *testing.T) {
	g := newRig(t, nil)
	c := dialUDP(t, g.rx.Addrs().Face)
	var want []FacePacket
	sent, short := 0, 0
	for _, s := range SplitCapture(readCapture(t)) {
		datagrams := [][]byte{s.Bytes}
		if s.Err != nil {
			datagrams = nil
			for off := 0; off < len(s.Bytes); off += shortSize {
				datagrams = append(datagrams, s.Bytes[off:off+shortSize])
			}
			short += len(datagrams)
		} else {
			want = append(want, s.Packet)
		}
		for _, d := range datagrams {
			if _, err := c.Write(d); err != nil {
				t.Fatal(err)
			}
			sent++
			// A few at a time, so the socket's buffer never overflows.
			if sent%20 == 0 {
				n := sent
				bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
					st := g.rx.Stats()
					if got := st.FacePackets + st.FaceRejected; got != uint64(n) {
						return fmt.Errorf("%d of %d datagrams read", got, n)
					}
					return nil
				})
			}
		}
	}
	bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if n := len(g.frames()); n != len(want) {
			return fmt.Errorf("%d frames on the bus, want %d", n, len(want))
		}
		return nil
	})
	if st := g.rx.Stats(); st.FacePackets != uint64(len(want)) || st.FaceRejected != uint64(short) || short != shortCount {
		t.Fatalf("stats %+v, want %d packets and %d rejected", st, len(want), shortCount)
	}
	for i, f := range g.frames() {
		p := want[i]
		if f.SubjectName != captureSubj || f.SubjectType != msg.SubjectFace || f.FrameNumber != uint64(p.FrameNumber) {
			t.Fatalf("frame %d: %s %s %d, want %d", i, f.SubjectName, f.SubjectType, f.FrameNumber, p.FrameNumber)
		}
		if v, _ := f.Property("headYaw"); v != p.Values[52] {
			t.Fatalf("frame %d headYaw %v, want %v", i, v, p.Values[52])
		}
	}
	st := g.rx.Registry().Status()
	if len(st) != 1 || st[0].SubjectName != captureSubj || st[0].SourceIP != "127.0.0.1" || st[0].SubjectType != msg.SubjectFace ||
		len(st[0].Properties) != FaceBlendShapeCount || st[0].Frames != uint64(len(want)) ||
		st[0].FrameNumber != uint64(want[len(want)-1].FrameNumber) || (!st[0].Stale && st[0].FrameRate <= 0) {
		t.Fatalf("registry %+v", st)
	}
	// Silence makes it stale, and the change is published.
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		st := g.rx.Registry().Status()
		if len(st) != 1 || !st[0].Stale || st[0].FrameRate != 0 {
			return fmt.Errorf("status %+v", st)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if n := len(g.sub); n < 2 || g.sub[n-1].FrameRate != 0 {
			return fmt.Errorf("subject updates %+v", g.sub)
		}
		return nil
	})
}

type jsonConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialData(t *testing.T, addr string) *jsonConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &jsonConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (j *jsonConn) send(lines ...string) {
	if _, err := j.c.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		j.t.Fatal(err)
	}
}

func (j *jsonConn) readError() JSONError {
	_ = j.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := j.br.ReadBytes('\n')
	if err != nil {
		j.t.Fatalf("reading an error line: %v", err)
	}
	var e JSONError
	if err := json.Unmarshal(line, &e); err != nil {
		j.t.Fatalf("%q: %v", line, err)
	}
	return e
}

func TestReceiverJSON(t *testing.T) {
	g := newRig(t, nil)
	a, b := dialData(t, g.rx.Addrs().Data), dialData(t, g.rx.Addrs().Data)
	a.send(`{"v":1,"subject":"UE_Character","type":"animation","frame":1,"names":["elbow"],"values":[10]}`,
		`{"v":1,"subject":"UE_Character","type":"skeleton"}`,
		``,
		`{"v":1,"subject":"UE_Character","type":"animation","frame":2,"names":["elbow"],"values":[20]}`)
	if e := a.readError(); e.Line != 2 || e.Field != "type" || e.Closed {
		t.Errorf("error %+v, want line 2 naming type", e)
	}
	b.send(`{"v":1,"subject":"VR_Controller_L","type":"transform","frame":9,"transform":{"translation":[0,0,1],"rotation":[0,0,0,1]}}`)
	// An over-long line closes only its own connection.
	b.send(`{"v":1,"pad":"` + strings.Repeat("x", MaxJSONFrame) + `"}`)
	if e := b.readError(); !e.Closed || e.Field != "frame" {
		t.Errorf("over-long line: %+v", e)
	}
	a.send(`{"v":1,"subject":"UE_Character","type":"animation","frame":3,"names":["elbow"],"values":[30]}`)
	bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		var elbow []float32
		var vr int
		for _, f := range g.frames() {
			switch f.SubjectName {
			case "UE_Character":
				v, _ := f.Property("elbow")
				elbow = append(elbow, v)
			case "VR_Controller_L":
				vr++
			}
		}
		if fmt.Sprint(elbow) != "[10 20 30]" || vr != 1 {
			return fmt.Errorf("elbow %v, transform frames %d", elbow, vr)
		}
		return nil
	})
	if st := g.rx.Stats(); st.JSONFrames != 4 || st.JSONRejected != 2 {
		t.Errorf("stats %+v", st)
	}
	subs := g.rx.Registry().Subjects()
	if len(subs) != 2 || subs[0].SubjectName != "UE_Character" || subs[0].SubjectType != msg.SubjectAnimation ||
		subs[1].SubjectType != msg.SubjectTransform || subs[1].SourceIP != "127.0.0.1" {
		t.Errorf("subjects %+v", subs)
	}
}

func TestReceiverConnectionLimit(t *testing.T) {
	g := newRig(t, func(o *Options) { o.MaxConnections = 1 })
	a := dialData(t, g.rx.Addrs().Data)
	a.send(`{"v":1,"subject":"S","type":"face"}`)
	bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if len(g.frames()) != 1 {
			return fmt.Errorf("no frame yet")
		}
		return nil
	})
	b := dialData(t, g.rx.Addrs().Data)
	if e := b.readError(); !e.Closed || e.Field != "connection" {
		t.Errorf("second connection: %+v", e)
	}
}

func TestDiscovery(t *testing.T) {
	// Somewhere to announce to.
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g := newRig(t, func(o *Options) {
		o.AnnounceTo = []string{l.LocalAddr().String()}
		o.AnnounceEvery = 10 * time.Millisecond
	})
	addrs := g.rx.Addrs()
	wantPorts := func(bc Beacon) error {
		_, dp, _ := net.SplitHostPort(addrs.Data)
		_, fp, _ := net.SplitHostPort(addrs.Face)
		if bc.Kind != BeaconAnnounce || bc.Name != "SAINT-TEST" || fmt.Sprint(bc.DataPort) != dp || fmt.Sprint(bc.FacePort) != fp {
			return fmt.Errorf("announce %+v, want data port %s and face port %s", bc, dp, fp)
		}
		return nil
	}
	buf := make([]byte, 2048)
	_ = l.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := l.ReadFromUDP(buf)
	if err != nil {
		t.Fatal(err)
	}
	bc, err := DecodeBeacon(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if err := wantPorts(bc); err != nil {
		t.Error(err)
	}
	// A source asks; the answer comes back to it.
	c := dialUDP(t, addrs.Discovery)
	if _, err := c.Write([]byte(`garbage`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(`{"saint_livelink":1,"kind":"discover","name":"UE_Editor"}`)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err = c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if bc, err = DecodeBeacon(buf[:n]); err != nil {
		t.Fatal(err)
	}
	if err := wantPorts(bc); err != nil {
		t.Error(err)
	}
	if st := g.rx.Stats(); st.Beacons != 1 || st.BeaconsBad != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestReceiverJSONOverUDP: JSON frames also arrive as UDP datagrams on the
// data port, one frame per datagram; a bad datagram is counted and
// dropped without affecting the next.
func TestReceiverJSONOverUDP(t *testing.T) {
	g := newRig(t, nil)
	a := g.rx.Addrs()
	_, tcpPort, _ := net.SplitHostPort(a.Data)
	if _, udpPort, _ := net.SplitHostPort(a.DataUDP); udpPort != tcpPort {
		t.Fatalf("data UDP %s, want the TCP listener's port %s", a.DataUDP, tcpPort)
	}
	c := dialUDP(t, a.DataUDP)
	for _, d := range []string{
		`{"v":1,"subject":"VR_Controller_L","type":"transform","frame":1,"transform":{"translation":[0.4,0.2,0.3],"rotation":[0,0,0.3826834,0.9238795]},"properties":{"trigger":0.5}}` + "\n",
		`{"v":1,"subject":"VR_Controller_L","type":"transform","transform":{"translation":[0,0,0],"rotation":[0,0,0,2]}}`,
		`not json`,
		`{"v":1,"subject":"VR_Controller_L","type":"transform","frame":2,"transform":{"translation":[0.5,0.2,0.3],"rotation":[0,0,0,1]}}`,
	} {
		if _, err := c.Write([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	bustest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		fs := g.frames()
		if len(fs) != 2 {
			return fmt.Errorf("%d frames", len(fs))
		}
		if tr := fs[0].Transform; fs[0].FrameNumber != 1 || tr.Translation.X != 0.4 || tr.Rotation.Z != 0.3826834 {
			return fmt.Errorf("first frame %+v", fs[0])
		}
		if v, _ := fs[0].Property("trigger"); v != 0.5 || fs[1].Transform.Translation.X != 0.5 {
			return fmt.Errorf("frames %+v", fs)
		}
		return nil
	})
	if st := g.rx.Stats(); st.JSONFrames != 2 || st.JSONRejected != 2 {
		t.Errorf("stats %+v", st)
	}
}
