package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
)

// tcpProxy forwards TCP connections from its own address to target until
// cut: then every connection through it is closed and new ones are closed
// as soon as they are accepted, as a network partition between one node
// and the server looks to that node.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	// forwarded counts the connections forwarded to target.
	forwarded int
}

// count is how many connections the proxy has forwarded to its target.
func (p *tcpProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forwarded
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.setCut(true) })
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *tcpProxy) forward(c net.Conn) {
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		_ = c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.forwarded++
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// setCut cuts the link (closing every connection through it) or restores it.
func (p *tcpProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

// trackStates records the tracks node's TrackState as it arrives.
type trackStates struct {
	mu     sync.Mutex
	states []msg.TrackState
}

func (s *trackStates) add(st msg.TrackState) {
	s.mu.Lock()
	s.states = append(s.states, st)
	s.mu.Unlock()
}

func (s *trackStates) snapshot() []msg.TrackState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]msg.TrackState(nil), s.states...)
}

// linkTestSetup publishes the firmware with role configurations in which
// a track may stand still while driven, and the supply read 0 V, without a
// fault (the simulated node board alone has no physics behind its
// H-bridges and no battery: its encoders never count, its INA219 reads
// nothing), starts the
// server, a proxy to its broker and a tracks node behind the proxy, and
// adopts it. The test's own bus client connects to the broker directly.
func linkTestSetup(t *testing.T) (srv *server, proxy *tcpProxy, client *natsbus.Conn, states *trackStates) {
	t.Helper()
	root := t.TempDir()
	configs := filepath.Join(root, "configs")
	if err := os.CopyFS(configs, os.DirFS(configsDir)); err != nil {
		t.Fatal(err)
	}
	tracksYAML := filepath.Join(configs, "tracks.yaml")
	data, err := os.ReadFile(tracksYAML)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(data)
	for _, r := range [][2]string{{"stall_timeout_ms: 500", "stall_timeout_ms: 60000"}, {"trip_ms: 500", "trip_ms: 60000"}} {
		if !strings.Contains(edited, r[0]) {
			t.Fatalf("tracks.yaml has no %q to lift", r[0])
		}
		edited = strings.Replace(edited, r[0], r[1], 1)
	}
	if err := os.WriteFile(tracksYAML, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl(t, "firmware", "publish", "--image", bin.node, "--version", firmwareVersion,
		"--configs", configs, "--out", filepath.Join(serverDataDir(root), "firmware"))
	srv = newServer(t, root)
	proxy = newTCPProxy(t, srv.natsAddr)
	n := &node{id: "e2e-link-tracks", stateDir: filepath.Join(root, "e2e-link-tracks")}
	n.proc = startProc(t, root, n.id, bin.node,
		"--server", "nats://"+proxy.addr(), "--hal", "sim", "--trust-first-server", "--sim-hw", "tracks", "--id", n.id, "--state-dir", n.stateDir,
		"--allow-unsigned-firmware")

	c := newAPI(t, "ws://"+srv.wsAddr+"/saint")
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		un, err := c.unadopted()
		if err != nil {
			return err
		}
		if _, ok := un[n.id]; !ok {
			return errNotYet("tracks node not announced")
		}
		return nil
	})
	adoptedAt := time.Now()
	c.mustGet("adopt_node", map[string]any{"node_id": n.id, "role": "tracks"}, nil)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error { return c.checkActive(n.id, "tracks", adoptedAt) })

	key, err := natsbus.ReadKey(filepath.Join(srv.data, "bus", "tools.nk"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(srv.data, "bus", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := natsbus.TrustCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	client, err = natsbus.Connect(srv.natsURL(), &natsbus.Options{Name: "e2e link test", RetryConnect: true, Key: key, TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	ex := bustest.RunExecutor(t)
	states = &trackStates{}
	if _, err := bus.SubscribeJSON(client, msg.TopicTracksState, bus.QoS{Depth: 10000}, ex, func(_ string, st msg.TrackState) {
		states.add(st)
	}); err != nil {
		t.Fatal(err)
	}
	return srv, proxy, client, states
}

type errNotYet string

func (e errNotYet) Error() string { return string(e) }

// driveTracks publishes cmd_vel at 0.8 m/s every 100 ms, as the router
// does for a joystick, until stop is called.
func driveTracks(client bus.Bus) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			_ = client.Publish(msg.TopicTracksCmdVel, msg.Twist{Linear: msg.Vector3{X: 0.8}})
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// stateRate is the tracks' TrackState rate (tracks.yaml state_rate_hz).
const stateRate = 20

// checkStoppedAfter looks at the TrackStates the node published from the
// loss on — held by its bus client while it was cut off and delivered when
// it reconnected, in order — and checks that the motors were disabled
// (braking, as at an emergency stop) within 0.5 s and re-enabled once the
// link came back.
func checkStoppedAfter(t *testing.T, all []msg.TrackState, from int) {
	t.Helper()
	after := all[from:]
	enabled := 0
	for enabled < len(after) && after[enabled].MotorsEnabled {
		enabled++
	}
	if enabled == len(after) {
		t.Fatalf("the node never disabled its motors after the link was lost (%d TrackStates since)", len(after))
	}
	// Each TrackState is 1/20 s: the number still enabled is the time the
	// node drove on.
	drove := time.Duration(enabled) * time.Second / stateRate
	t.Logf("link lost: motors disabled after %d TrackStates (about %v)", enabled, drove)
	if drove > 500*time.Millisecond {
		t.Errorf("the node drove on for %d TrackStates (%v) after the link was lost, want within 0.5 s", enabled, drove)
	}
	if last := all[len(all)-1]; !last.MotorsEnabled || last.EStopActive {
		t.Errorf("link back: TrackState %+v, want the motors enabled again (no emergency stop latched)", last)
	}
}

// A tracks node cut off the network (a proxy between it and the broker,
// cut) while driving at 0.8 m/s stops its motors within 0.5 s, although
// its last command was fresh, and re-enables them when the link returns.
func TestTracksStopOnANetworkPartition(t *testing.T) {
	skipShort(t)
	_, proxy, client, states := linkTestSetup(t)
	stop := driveTracks(client)
	defer stop()
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if s := states.snapshot(); len(s) < 20 || !s[len(s)-1].MotorsEnabled {
			if len(s) > 0 {
				return fmt.Errorf("tracks not driving yet: %d TrackStates, last %+v", len(s), s[len(s)-1])
			}
			return errNotYet("tracks not driving yet: no TrackState")
		}
		return nil
	})
	from := len(states.snapshot())
	proxy.setCut(true)
	// The partition's length is the stimulus: longer than the link timeout.
	time.Sleep(1500 * time.Millisecond)
	proxy.setCut(false)
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		s := states.snapshot()
		if len(s) < from+30 || !s[len(s)-1].MotorsEnabled {
			return errNotYet("no TrackStates from after the partition yet")
		}
		return nil
	})
	checkStoppedAfter(t, states.snapshot(), from)
}

// The server killed (SIGKILL) while the tracks drive at 0.8 m/s: the node
// stops its motors within 0.5 s. The node's link is held cut while the
// server restarts, so that the test's own client is back on the new
// broker before the node's held TrackStates arrive.
func TestTracksStopWhenTheServerIsKilled(t *testing.T) {
	skipShort(t)
	srv, proxy, client, states := linkTestSetup(t)
	stop := driveTracks(client)
	bustest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if s := states.snapshot(); len(s) < 20 || !s[len(s)-1].MotorsEnabled {
			if len(s) > 0 {
				return fmt.Errorf("tracks not driving yet: %d TrackStates, last %+v", len(s), s[len(s)-1])
			}
			return errNotYet("tracks not driving yet: no TrackState")
		}
		return nil
	})
	from := len(states.snapshot())
	srv.kill()
	stop()
	proxy.setCut(true)
	// The partition's length is the stimulus: longer than the link timeout.
	time.Sleep(1500 * time.Millisecond)
	if err := os.Remove(srv.addrFile); err != nil {
		t.Fatal(err)
	}
	srv.start()
	srv.waitUp()
	bustest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if !client.IsConnected() {
			return errNotYet("test client not reconnected")
		}
		return client.NATS().Flush()
	})
	proxy.setCut(false)
	bustest.CheckFor(t, 15*time.Second, 50*time.Millisecond, func() error {
		s := states.snapshot()
		if len(s) < from+30 || !s[len(s)-1].MotorsEnabled {
			return errNotYet("no TrackStates from after the restart yet")
		}
		return nil
	})
	checkStoppedAfter(t, states.snapshot(), from)
}
