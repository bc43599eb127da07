package main

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/internal/rtpspeer"
	"github.com/saint-os/saint/ros2"
	"github.com/saint-os/saint/ros2/cyclone"
)

// callSystemStatus calls /saint/system/status with rmw_cyclonedds_cpp's
// header until answered, and returns the reply.
func callSystemStatus(t *testing.T, p *peer, hdr ros2.RequestHeader) map[string]any {
	t.Helper()
	svc, _ := p.reg.Service("saint_os/GetSystemStatus")
	replies := make(chan map[string]any, 4)
	rr, err := p.p.NewReader("rr/saint/system/statusReply", svc.Response.DDSTypeName(), cyclone.QoS{Reliable: true}, func(cdr []byte) {
		v, h, err := p.reg.Decode(svc.Response, cdr)
		if err != nil {
			t.Errorf("status reply: %v", err)
			return
		}
		if h != hdr {
			return
		}
		select {
		case replies <- v:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	rq, err := p.p.NewWriter("rq/saint/system/statusRequest", svc.Request.DDSTypeName(), cyclone.QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the status service", func() bool { return rq.MatchedReaders() > 0 && rr.MatchedWriters() > 0 })
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); {
		if err := rq.Write(p.encode("saint_os/GetSystemStatus_Request", map[string]any{}, &hdr)); err != nil {
			t.Fatal(err)
		}
		select {
		case v := <-replies:
			return v
		case <-time.After(time.Second):
		}
	}
	t.Fatal("no reply on rr/saint/system/statusReply")
	return nil
}

// TestPeerWithInt8TypesCannotCrashBridge runs saint-sim --ros2 with a
// DDS peer already on the domain whose endpoints, on the bridge's
// cmd_vel, odometry and status service topics, announce a type with int8
// and uint8 members (XTypes 1.3's TK_INT8/TK_UINT8) and which keeps
// sending the TypeLookup reply with that type object. Cyclone DDS 0.10.2
// crashed (SIGSEGV) resolving it, before the bridge was even running.
// The bridge must start, stay the same process (one participant on the
// domain, never a new one after a restart), never ask the peer for its
// type, and serve a ROS 2 client: odometry and a service answer.
func TestPeerWithInt8TypesCannotCrashBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the simulation")
	}
	dir := buildBins(t)
	domain := loopbackDDS(t)
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := reg.Service("saint_os/GetSystemStatus")
	odomType, _ := reg.Message("nav_msgs/Odometry")
	crash, err := rtpspeer.Start(rtpspeer.Options{Domain: domain, Endpoints: []rtpspeer.Endpoint{
		{Topic: "rt" + msg.TopicTracksCmdVel, TypeName: "geometry_msgs::msg::dds_::Twist_"},
		{Topic: "rt" + msg.TopicTracksOdom, TypeName: odomType.DDSTypeName()},
		{Topic: "rq/saint/system/statusRequest", TypeName: svc.Request.DDSTypeName()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer crash.Close()

	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "1",
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))
	var bridge [12]byte
	waitFor(t, 60*time.Second, "the bridge's participant", func() bool {
		for g := range crash.Heard() {
			bridge = g
			return true
		}
		return false
	})
	// The bridge has the peer's endpoints (and so the type id) once it
	// has heard the peer; give it 3 s of replies, 30 of them.
	sent := crash.RepliesSent()
	waitFor(t, 20*time.Second, "30 TypeLookup replies", func() bool { return crash.RepliesSent() >= sent+30 })

	p := newPeer(t, domain)
	odom, odomReader := p.subscribe(msg.TopicTracksOdom, "nav_msgs/Odometry")
	waitFor(t, 30*time.Second, "the bridge's odometry writer", func() bool { return odomReader.MatchedWriters() > 0 })
	select {
	case <-odom:
	case <-time.After(10 * time.Second):
		t.Fatal("no odometry from the bridge beside the int8 peer")
	}
	status := callSystemStatus(t, p, ros2.RequestHeader{GUID: 0xc0ffee, Seq: 1})
	if st, ok := status["status"].(map[string]any); !ok || st["server_name"] == "" {
		t.Errorf("GetSystemStatus answered %v", status)
	} else if ts := st["timestamp"].(float64); math.Abs(ts-float64(time.Now().UnixNano())/1e9) > 2 {
		// --speed 1: SystemStatus.timestamp is wall-clock time too.
		t.Errorf("SystemStatus.timestamp %.3f at wall-clock time %.3f", ts, float64(time.Now().UnixNano())/1e9)
	}

	// A restarted bridge would be a participant of a new GUID.
	client, err := p.p.GUIDPrefix()
	if err != nil {
		t.Fatal(err)
	}
	for g := range crash.Heard() {
		if g != bridge && g != client {
			t.Errorf("the peer heard participant %x besides the bridge %x and the client %x: the bridge was restarted (crashed)", g, bridge, client)
		}
	}
	if n := crash.TypeRequests(); n != 0 {
		t.Errorf("the bridge asked the peer for its type %d times", n)
	}
}
