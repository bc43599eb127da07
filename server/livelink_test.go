package server_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/inputs/livelink"
)

type liveLinkStatus struct {
	Enabled  bool                     `json:"enabled"`
	Data     string                   `json:"data_tcp"`
	Face     string                   `json:"face_udp"`
	Stats    livelink.Stats           `json:"stats"`
	Subjects []livelink.SubjectStatus `json:"subjects"`
}

func sendJSONFrame(t *testing.T, addr, line string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintln(c, line); err != nil {
		t.Fatal(err)
	}
}

// TestLiveLinkFollowsSettings: the receiver reports itself through
// livelink get_status, stops when the settings turn LiveLink off, and
// comes back on when they turn it on, with the registry kept.
func TestLiveLinkFollowsSettings(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.LiveLink = server.LiveLinkOptions{FaceAddr: "127.0.0.1:0", DataAddr: "127.0.0.1:0"}
	})
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	status := func() liveLinkStatus {
		var st liveLinkStatus
		c.ok("livelink", "", "get_status", map[string]any{}, &st)
		return st
	}
	// With authentication on, loopback is a sender like any other.
	c.ok("livelink", "", "allow_sender", map[string]any{"address": "127.0.0.1"}, nil)
	st := status()
	if !st.Enabled || st.Data == "" || st.Face == "" || st.Data != r.srv.LiveLinkAddrs().Data {
		t.Fatalf("status %+v, addrs %+v", st, r.srv.LiveLinkAddrs())
	}
	sendJSONFrame(t, st.Data, `{"v":1,"subject":"UE_Character","type":"animation","frame":5,"names":["elbow"],"values":[10]}`)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		st := status()
		if st.Stats.JSONFrames != 1 || len(st.Subjects) != 1 || st.Subjects[0].FrameNumber != 5 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	c.ok("management", "", "set_settings", map[string]any{"livelink": map[string]any{"enabled": false}}, nil)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if st := status(); st.Enabled {
			return fmt.Errorf("still enabled: %+v", st)
		}
		return nil
	})
	if conn, err := net.Dial("tcp", st.Data); err == nil {
		conn.Close()
		t.Errorf("the data port %s still accepts connections with LiveLink off", st.Data)
	}

	c.ok("management", "", "set_settings", map[string]any{"livelink": map[string]any{"enabled": true}}, nil)
	var again liveLinkStatus
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if again = status(); !again.Enabled {
			return fmt.Errorf("not enabled again: %+v", again)
		}
		return nil
	})
	if len(again.Subjects) != 1 || again.Subjects[0].SubjectName != "UE_Character" {
		t.Errorf("registry after the restart: %+v", again.Subjects)
	}
	sendJSONFrame(t, again.Data, `{"v":1,"subject":"UE_Character","type":"animation","frame":6,"names":["elbow"],"values":[11]}`)
	bustest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if st := status(); len(st.Subjects) != 1 || st.Subjects[0].FrameNumber != 6 || st.Subjects[0].Frames != 2 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// TestLiveLinkLoopbackOnFreshInstall: asked to listen on every interface,
// a server whose settings do not turn livelink.external on opens its
// LiveLink listeners on 127.0.0.1 only.
func TestLiveLinkLoopbackOnFreshInstall(t *testing.T) {
	broker := mem.NewBroker()
	r := newRobotWith(t, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.LiveLink = server.LiveLinkOptions{FaceAddr: "0.0.0.0:0", DataAddr: "0.0.0.0:0", DiscoveryAddr: "0.0.0.0:0"}
	})
	if r.srv.Settings().Get().LiveLink.External {
		t.Fatal("livelink.external is on in a fresh install")
	}
	a := r.srv.LiveLinkAddrs()
	for name, addr := range map[string]string{"face": a.Face, "data": a.Data, "discovery": a.Discovery} {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%s listener %q: %v", name, addr, err)
		}
		if host != "127.0.0.1" {
			t.Errorf("%s listener on %s, want 127.0.0.1 with livelink.external off", name, addr)
		}
	}
}
