package node_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/node/fetch"
	"github.com/saint-os/saint/roleconfig"
	simboard "github.com/saint-os/saint/sim/board"
)

// fakeServer answers the server's side of the node protocol on the bus:
// firmware check and download, role configuration and validation. Tests
// set what it offers and read what it was asked.
type fakeServer struct {
	t       *testing.T
	version string // published firmware version ("" = none)
	image   []byte
	sum     string // published checksum (may lie)
	url     string // offered URL, "" for none (bus chunks only)
	sig     string // offered signature, "" for none
	// downgrade is the offered downgrade permission, "" for none.
	downgrade string

	checks      []msg.FirmwareCheckRequest
	downloads   int
	offsets     []int64 // the offset of every download request
	failAt      int64   // > 0: the first request at or past this offset fails, as a server restart would
	validations []msg.ValidateRoleRequest
	// calledAs are the per-node service names the node called, in order.
	calledAs []string
	validMsg string // non-empty: reject stored roles with this reason
}

func (f *fakeServer) publish(version string, image []byte) {
	f.version, f.image = version, image
	s := sha256.Sum256(image)
	f.sum = hex.EncodeToString(s[:])
}

func (f *fakeServer) serve(b bus.Bus, ex *executor.Executor) {
	must := func(_ bus.Subscription, err error) {
		if err != nil {
			f.t.Fatal(err)
		}
	}
	must(bus.ServeJSON(b, msg.ServiceFirmwareCheck, ex, func(req msg.FirmwareCheckRequest, reply func(msg.FirmwareCheckResponse, error)) {
		f.checks = append(f.checks, req)
		resp := msg.FirmwareCheckResponse{Version: f.version, ChecksumSHA256: f.sum, SizeBytes: int64(len(f.image)), URL: f.url, Signature: f.sig, DowngradeSignature: f.downgrade}
		resp.UpdateAvailable = f.version != "" && (req.Force || req.CurrentVersion != f.version)
		reply(resp, nil)
	}))
	must(bus.ServeJSON(b, msg.ServiceFirmwareDownload, ex, func(req msg.FirmwareDownloadRequest, reply func(msg.FirmwareDownloadResponse, error)) {
		f.downloads++
		f.offsets = append(f.offsets, req.Offset)
		if req.Version != f.version {
			reply(msg.FirmwareDownloadResponse{Version: f.version, Message: "version: " + req.Version + " is not published"}, nil)
			return
		}
		if f.failAt > 0 && req.Offset >= f.failAt {
			f.failAt = 0
			reply(msg.FirmwareDownloadResponse{Message: "server restarting"}, nil)
			return
		}
		end := req.Offset + 1000 // small chunks exercise the resume loop
		if end > int64(len(f.image)) {
			end = int64(len(f.image))
		}
		reply(msg.FirmwareDownloadResponse{Success: true, Version: f.version, SizeBytes: int64(len(f.image)),
			ChecksumSHA256: f.sum, Offset: req.Offset, Data: f.image[req.Offset:end]}, nil)
	}))
	must(bus.ServeJSONWithName(b, msg.ServiceAllNodesRoleConfig, ex, func(name string, req msg.RoleConfigRequest, reply func(msg.RoleConfigResponse, error)) {
		f.calledAs = append(f.calledAs, name)
		data, err := os.ReadFile(filepath.Join("..", "fixtures", "config", "roles", msg.RoleKey(req.Role, req.Instance)+".yaml"))
		if err != nil {
			reply(msg.RoleConfigResponse{Message: err.Error()}, nil)
			return
		}
		reply(msg.RoleConfigResponse{Success: true, Version: "1.0.0", Checksum: roleconfig.Checksum(data), Config: string(data)}, nil)
	}))
	must(bus.ServeJSONWithName(b, msg.ServiceAllNodesValidateRole, ex, func(name string, req msg.ValidateRoleRequest, reply func(msg.ValidateRoleResponse, error)) {
		f.calledAs = append(f.calledAs, name)
		f.validations = append(f.validations, req)
		reply(msg.ValidateRoleResponse{Valid: f.validMsg == "", Message: f.validMsg}, nil)
	}))
}

// rig is a node on a simulated board with a fake server, all on one
// virtual-clock executor.
type rig struct {
	t      *testing.T
	ex     *executor.Executor
	broker *mem.Broker
	client bus.Bus // the server side
	srv    *fakeServer
	board  *simboard.Board
	dir    string
	node   *node.Node

	announcements []msg.NodeGPIOStatus
	statuses      []msg.NodeStatus
	rolesStarted  []string
	fetcher       node.Fetcher // set before boot for HTTP downloads
	firmwareKeys  []ed25519.PublicKey
	// version is the firmware the node boots as; "" is 1.0.0.
	version string
}

func newRig(t *testing.T, profile simboard.Profile) *rig {
	t.Helper()
	return newRigWith(t, profile, nil)
}

// newRigWith is newRig with the rig changed by edit before the node boots.
func newRigWith(t *testing.T, profile simboard.Profile, edit func(*rig)) *rig {
	t.Helper()
	r := &rig{t: t, ex: executor.NewVirtual(), broker: mem.NewBroker(), dir: t.TempDir()}
	if edit != nil {
		edit(r)
	}
	r.client = r.broker.Connect(nil)
	r.srv = &fakeServer{t: t}
	r.srv.serve(r.client, r.ex)
	b, err := simboard.New(&simboard.Options{NodeID: "node-1", Profile: profile, Clock: r.ex.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	r.board = b
	if _, err := bus.SubscribeJSON(r.client, msg.NodeAnnounceTopic("node-1"), bus.QoS{Depth: 1000}, r.ex, func(_ string, v msg.NodeGPIOStatus) {
		r.announcements = append(r.announcements, v)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.SubscribeJSON(r.client, msg.NodeStatusTopic("node-1"), bus.QoS{Depth: 1000}, r.ex, func(_ string, v msg.NodeStatus) {
		r.statuses = append(r.statuses, v)
	}); err != nil {
		t.Fatal(err)
	}
	r.boot()
	return r
}

// boot starts a node process on the rig's board and state directory.
func (r *rig) boot() {
	r.t.Helper()
	version := r.version
	if version == "" {
		version = "1.0.0"
	}
	n, err := node.New(node.Options{Exec: r.ex, Bus: r.broker.Connect(nil), Board: r.board, StateDir: r.dir, FirmwareVersion: version, Fetcher: r.fetcher,
		FirmwareKeys: r.firmwareKeys,
		RoleStarted:  func(role string) { r.rolesStarted = append(r.rolesStarted, role) }})
	if err != nil {
		r.t.Fatal(err)
	}
	r.node = n
	n.Start()
}

// crash stops the node as a kill -9 would, as far as the role store is
// concerned: nothing is cleaned up on disk.
func (r *rig) crash() {
	r.node.Stop()
	r.node = nil
}

func (r *rig) run(d time.Duration) {
	r.t.Helper()
	if err := r.ex.RunFor(context.Background(), d); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) state() string { return r.node.State() }

func (r *rig) call(service string, req any, out any) {
	r.t.Helper()
	var err error
	done := false
	r.client.CallAsync(service, req, 5*time.Second, r.ex, func(m bus.Msg, e error) {
		done, err = true, e
		if e == nil {
			err = m.Decode(out)
		}
	})
	r.run(2 * time.Second)
	if !done || err != nil {
		r.t.Fatalf("%s: done=%v err=%v", service, done, err)
	}
}

func (r *rig) adopt(role, instance string) msg.AdoptNodeResponse {
	var resp msg.AdoptNodeResponse
	r.call(msg.NodeAdoptService("node-1"), msg.AdoptNodeRequest{NodeID: "node-1", Role: role, Instance: instance}, &resp)
	return resp
}

func TestBootAnnouncesUnadopted(t *testing.T) {
	r := newRig(t, simboard.Head)
	r.run(3 * time.Second)
	if r.state() != msg.StateUnadopted {
		t.Fatalf("state %s, want UNADOPTED", r.state())
	}
	if len(r.srv.checks) != 1 || r.srv.checks[0].CurrentVersion != "1.0.0" {
		t.Errorf("firmware checks = %+v, want one for 1.0.0 before anything else", r.srv.checks)
	}
	if n := len(r.announcements); n < 3 {
		t.Errorf("%d announcements in 3 s, want at least 1 Hz", n)
	}
	a := r.announcements[len(r.announcements)-1]
	if a.NodeID != "node-1" || a.FirmwareVersion != "1.0.0" || len(a.Pins) != 28 {
		t.Errorf("announcement: id %q fw %q %d pins", a.NodeID, a.FirmwareVersion, len(a.Pins))
	}
	found := false
	for _, p := range a.Peripherals {
		found = found || (p.Address == "1:0x68" && p.Responsive)
	}
	if !found {
		t.Errorf("head board's IMU at 1:0x68 not reported: %+v", a.Peripherals)
	}
	if len(r.statuses) == 0 || r.statuses[len(r.statuses)-1].State != msg.StateUnadopted {
		t.Errorf("statuses: %+v", r.statuses)
	}
}

func TestAdoptStartsRoleHardwareAndPersists(t *testing.T) {
	r := newRig(t, simboard.Head)
	r.run(time.Second)
	resp := r.adopt("head", "")
	if !resp.Success || resp.AssignedTopicPrefix != "/saint/head" {
		t.Fatalf("adopt: %+v", resp)
	}
	if r.state() != msg.StateActive {
		t.Fatalf("state %s, want ACTIVE", r.state())
	}
	if g := strings.Join(r.rolesStarted, ","); g != "head" {
		t.Errorf("RoleStarted called with %q, want once with head", g)
	}
	for _, want := range []struct {
		bcm  int
		name string
	}{{12, "pan_servo"}, {13, "tilt_servo"}} {
		var pin *msg.GPIOPin
		var probe msg.GPIOProbeResponse
		r.call(msg.NodeGPIOProbeService("node-1"), msg.GPIOProbeRequest{}, &probe)
		for i, p := range probe.Status.Pins {
			if p.PinName == fmt.Sprintf("GPIO%d", want.bcm) {
				pin = &probe.Status.Pins[i]
			}
		}
		if pin == nil || !pin.InUse || pin.UsedBy != want.name || pin.Direction != "pwm" {
			t.Errorf("GPIO%d = %+v, want in use by %s as pwm", want.bcm, pin, want.name)
		}
		freq, duty, on := r.board.PWMState(want.bcm)
		if !on || freq != 50 || duty != 0.075 {
			t.Errorf("GPIO%d PWM = %v Hz duty %v on %v, want a 1.5 ms servo pulse at 50 Hz", want.bcm, freq, duty, on)
		}
	}
	// The roll servo is on the head's PCA9685, channel 0.
	if freq, duty, on := r.board.PCA9685().PWMState(0); !on || math.Abs(duty/freq-1.5e-3) > 5e-6 {
		t.Errorf("PCA9685 channel 0 = %v Hz duty %v on %v, want a 1.5 ms servo pulse", freq, duty, on)
	}
	rec, cfg, ok, err := r.node.Store().LoadRole()
	if !ok || err != nil || rec.AssignedRole != "head" || !bytes.Contains(cfg, []byte("pan_servo")) {
		t.Errorf("stored role: %+v ok=%v err=%v", rec, ok, err)
	}
	again := r.adopt("tracks", "")
	if again.Success || !strings.Contains(again.Message, "already ACTIVE") {
		t.Errorf("second adoption of an ACTIVE node: %+v", again)
	}
}

func TestAdoptRefusedWhenPeripheralMissing(t *testing.T) {
	r := newRig(t, simboard.Bare)
	r.run(time.Second)
	resp := r.adopt("head", "")
	if resp.Success {
		t.Fatal("a bare board was adopted as head")
	}
	for _, want := range []string{"1:0x68", "mpu6050"} {
		if !strings.Contains(resp.Message, want) {
			t.Errorf("refusal %q does not name %s", resp.Message, want)
		}
	}
	if r.state() != msg.StateUnadopted {
		t.Errorf("state %s after refusal, want UNADOPTED", r.state())
	}
	if _, _, ok, _ := r.node.Store().LoadRole(); ok {
		t.Error("refused role was stored")
	}
	for _, p := range r.board.Pins() {
		if p.InUse && p.UsedBy != "reset_button" && !strings.HasPrefix(p.UsedBy, "i2c") && !strings.HasPrefix(p.UsedBy, "uart") {
			t.Errorf("pin left claimed after refusal: %+v", p)
		}
	}
	for _, tc := range []struct{ role, inst, want string }{
		{"wings", "", "unknown role"},
	} {
		if resp := r.adopt(tc.role, tc.inst); resp.Success || !strings.Contains(resp.Message, tc.want) {
			t.Errorf("adopt(%s): %+v", tc.role, resp)
		}
	}
}

func TestRestartResumesStoredRole(t *testing.T) {
	r := newRig(t, simboard.Arms)
	r.run(time.Second)
	if resp := r.adopt("arms", "left"); !resp.Success {
		t.Fatal(resp.Message)
	}
	r.crash()
	r.run(time.Second)
	r.boot()
	r.run(2 * time.Second)
	if r.state() != msg.StateActive {
		t.Fatalf("state after restart %s, want ACTIVE", r.state())
	}
	if got := r.node.Transitions(); strings.Join(got, ",") != "BOOT->ACTIVE" {
		t.Errorf("transitions after restart %v, want straight BOOT->ACTIVE", got)
	}
	if len(r.srv.validations) != 1 || r.srv.validations[0].Role != "arms" || r.srv.validations[0].Instance != "left" {
		t.Errorf("validations = %+v", r.srv.validations)
	}
	// The node fetches and validates its role on its own per-node names,
	// which an authenticated bus lets only its key call.
	if want := []string{"/saint/nodes/node-1/role_config", "/saint/nodes/node-1/validate_role"}; !slices.Equal(r.srv.calledAs, want) {
		t.Errorf("the node called %v, want %v", r.srv.calledAs, want)
	}
	st := r.statuses[len(r.statuses)-1]
	if st.Role != "arms" || st.Instance != "left" || st.TopicPrefix != "/saint/arms/left" {
		t.Errorf("status after restart: %+v", st)
	}

	// The server may declare a stored role invalid: the node drops it.
	r.crash()
	r.srv.validMsg = "role retired"
	r.boot()
	r.run(2 * time.Second)
	if r.state() != msg.StateUnadopted {
		t.Errorf("state with an invalid stored role %s, want UNADOPTED", r.state())
	}
}

func TestSoftAndFactoryReset(t *testing.T) {
	r := newRig(t, simboard.Tracks)
	image := bytes.Repeat([]byte("saint-node firmware "), 300)
	r.srv.publish("1.0.0", image) // the version the node runs: no update
	r.run(time.Second)
	if r.srv.downloads != 0 {
		t.Fatalf("node downloaded firmware it already runs")
	}
	if resp := r.adopt("tracks", ""); !resp.Success {
		t.Fatal(resp.Message)
	}
	var reset msg.ResetNodeResponse
	r.call(msg.NodeResetService("node-1"), msg.ResetNodeRequest{NodeID: "node-1"}, &reset)
	r.run(time.Second)
	if !reset.Success || r.state() != msg.StateUnadopted {
		t.Fatalf("after soft reset: %+v, state %s", reset, r.state())
	}
	if _, _, ok, _ := r.node.Store().LoadRole(); ok {
		t.Error("role survived a soft reset")
	}
	if _, _, on := r.board.PWMState(12); on {
		t.Error("motor PWM still running after reset")
	}
	if r.srv.downloads != 0 {
		t.Error("soft reset downloaded firmware")
	}

	if resp := r.adopt("tracks", ""); !resp.Success {
		t.Fatal(resp.Message)
	}
	r.call(msg.NodeResetService("node-1"), msg.ResetNodeRequest{NodeID: "node-1", FactoryReset: true}, &reset)
	r.run(2 * time.Second)
	if r.state() != msg.StateUnadopted {
		t.Fatalf("state after factory reset %s", r.state())
	}
	if r.srv.downloads == 0 {
		t.Fatal("factory reset did not download firmware again")
	}
	last := r.srv.checks[len(r.srv.checks)-1]
	if !r.srv.checks[len(r.srv.checks)-2].Force || last.Force {
		t.Errorf("force flag: checks %+v (want forced once, then cleared)", r.srv.checks)
	}
	got, err := os.ReadFile(filepath.Join(r.dir, "firmware", "current.img"))
	if err != nil || !bytes.Equal(got, image) {
		t.Errorf("installed image differs from the published one (err %v)", err)
	}
}

func TestFirmwareUpdateAndChecksumRefusal(t *testing.T) {
	r := newRig(t, simboard.Console)
	image := bytes.Repeat([]byte{0xA5, 0x5A, 0x00}, 2000)
	r.srv.publish("1.1.0", image)
	r.run(2 * time.Second)
	st := r.statuses[len(r.statuses)-1]
	if st.FirmwareVersion != "1.1.0" || r.state() != msg.StateUnadopted {
		t.Fatalf("after update: firmware %s state %s", st.FirmwareVersion, r.state())
	}
	sawUpdating := false
	for _, s := range r.statuses {
		sawUpdating = sawUpdating || s.State == msg.StateUpdating
	}
	if !sawUpdating {
		t.Error("node never reported UPDATING")
	}
	inst, ok := r.node.Store().InstalledFirmware()
	if !ok || inst.Version != "1.1.0" {
		t.Errorf("installed record %+v", inst)
	}

	// A new release whose bytes do not match its published sha256.
	r.srv.publish("1.2.0", []byte("good image"))
	r.srv.image = []byte("tampered image")
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.run(2 * time.Second)
	st = r.statuses[len(r.statuses)-1]
	if st.FirmwareVersion != "1.1.0" {
		t.Errorf("tampered image applied: running %s", st.FirmwareVersion)
	}
	if r.state() != msg.StateUnadopted {
		t.Errorf("node did not keep running after refusing the image: %s", r.state())
	}
	if !strings.Contains(st.Message, "refused") || !strings.Contains(st.Message, "sha256") {
		t.Errorf("status message %q does not say the image was refused for its checksum", st.Message)
	}
	got, _ := os.ReadFile(filepath.Join(r.dir, "firmware", "current.img"))
	if !bytes.Equal(got, image) {
		t.Error("refused image replaced the installed one")
	}
}

func TestHardResetButton(t *testing.T) {
	r := newRig(t, simboard.Head)
	r.run(time.Second)
	if resp := r.adopt("head", ""); !resp.Success {
		t.Fatal(resp.Message)
	}
	// A short press does nothing.
	r.board.PressReset(true)
	r.run(4 * time.Second)
	r.board.PressReset(false)
	r.run(2 * time.Second)
	if r.state() != msg.StateActive {
		t.Fatalf("4 s press reset the node (state %s)", r.state())
	}
	// Held for 5 s: hard reset.
	r.board.PressReset(true)
	r.run(5*time.Second + 100*time.Millisecond)
	r.board.PressReset(false)
	r.run(time.Second)
	if r.state() != msg.StateUnadopted {
		t.Fatalf("state after holding reset 5 s: %s", r.state())
	}
	if _, _, ok, _ := r.node.Store().LoadRole(); ok {
		t.Error("role survived a hard reset")
	}
}

func TestWaitsForServerAtBoot(t *testing.T) {
	ex := executor.NewVirtual()
	broker := mem.NewBroker()
	b, _ := simboard.New(&simboard.Options{NodeID: "lonely", Profile: simboard.Bare, Clock: ex.Clock()})
	n, err := node.New(node.Options{Exec: ex, Bus: broker.Connect(nil), Board: b, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	if err := ex.RunFor(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n.State() != msg.StateBoot || !strings.Contains(n.Status().Message, "waiting for server") {
		t.Fatalf("without a server: state %s, message %q", n.State(), n.Status().Message)
	}
	srv := &fakeServer{t: t}
	srv.serve(broker.Connect(nil), ex)
	if err := ex.RunFor(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if n.State() != msg.StateUnadopted {
		t.Errorf("after the server appeared: %s", n.State())
	}
}

func TestNodeIDValidated(t *testing.T) {
	b, _ := simboard.New(&simboard.Options{Profile: simboard.Bare})
	_, err := node.New(node.Options{Exec: executor.NewVirtual(), Bus: mem.New(), Board: b, StateDir: t.TempDir(), NodeID: "bad.id"})
	if err == nil || !strings.Contains(err.Error(), "bad.id") {
		t.Errorf("bad id accepted: %v", err)
	}
}

// scenario runs boot, adoption, a restart and a reset on a virtual clock
// and returns everything observable, for the determinism test.
func scenario(t *testing.T) string {
	r := newRig(t, simboard.Tracks)
	r.srv.publish("1.0.1", []byte("update"))
	r.run(1500 * time.Millisecond)
	r.adopt("tracks", "")
	r.crash()
	r.boot()
	r.run(1500 * time.Millisecond)
	var reset msg.ResetNodeResponse
	r.call(msg.NodeResetService("node-1"), msg.ResetNodeRequest{NodeID: "node-1"}, &reset)
	r.run(time.Second)
	var out strings.Builder
	for _, s := range r.statuses {
		fmt.Fprintf(&out, "%.6f %s %s %s %d|", s.Timestamp, s.State, s.Role, s.FirmwareVersion, s.UptimeSeconds)
	}
	for _, a := range r.announcements {
		fmt.Fprintf(&out, "A%d;", a.UptimeSeconds)
	}
	return out.String()
}

func TestDeterministic(t *testing.T) {
	a, b := scenario(t), scenario(t)
	if a != b {
		t.Fatalf("two runs of the same scenario differ:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, "ACTIVE tracks 1.0.1") {
		t.Errorf("scenario did not reach ACTIVE on the updated firmware: %s", a)
	}
}

// runUntil runs the rig's virtual time in steps until cond holds, letting
// wall time pass between steps for work done off the executor (an HTTP
// download); it fails after 10 s of wall time.
func (r *rig) runUntil(what string, cond func() bool) {
	r.t.Helper()
	bustest.CheckFor(r.t, 10*time.Second, 2*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		r.run(50 * time.Millisecond)
		return errors.New(what)
	})
}

// TestFirmwareOverHTTP updates the node from a real HTTP server: the bus
// carries only the check and its offer (URL, size, sha256), no chunk; the
// image is streamed to disk and installed. A second image whose bytes do
// not match the published sha256 is refused, the first kept.
func TestFirmwareOverHTTP(t *testing.T) {
	r := newRig(t, simboard.Console)
	var served atomic.Pointer[[]byte]
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		requests.Add(1)
		http.ServeContent(w, req, "saint_node.img", time.Time{}, bytes.NewReader(*served.Load()))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	r.run(time.Second)
	r.crash()
	r.fetcher = &fetch.Client{Host: "127.0.0.1"}
	r.boot()
	r.run(time.Second)

	image := bytes.Repeat([]byte{0xA5, 0x5A, 0x00}, 200_000)
	served.Store(&image)
	r.srv.publish("1.1.0", image)
	r.srv.url = "http://:" + port + "/firmware/current/saint_node.img" // no host: the node's view of the server
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.runUntil("update to 1.1.0", func() bool {
		return len(r.statuses) > 0 && r.statuses[len(r.statuses)-1].FirmwareVersion == "1.1.0"
	})
	if r.srv.downloads != 0 || requests.Load() == 0 {
		t.Errorf("%d bus chunk downloads and %d HTTP requests, want only HTTP", r.srv.downloads, requests.Load())
	}
	got, _ := os.ReadFile(filepath.Join(r.dir, "firmware", "current.img"))
	if !bytes.Equal(got, image) {
		t.Fatal("current.img is not the served image")
	}
	if inst, ok := r.node.Store().InstalledFirmware(); !ok || inst.Version != "1.1.0" || inst.Checksum != r.srv.sum {
		t.Errorf("installed record %+v", inst)
	}

	tampered := []byte("bad! image") // the published size, other bytes
	r.srv.publish("1.2.0", []byte("good image"))
	served.Store(&tampered)
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.runUntil("refusal of 1.2.0", func() bool {
		return strings.Contains(r.statuses[len(r.statuses)-1].Message, "refused")
	})
	st := r.statuses[len(r.statuses)-1]
	if st.FirmwareVersion != "1.1.0" || !strings.Contains(st.Message, "sha256") {
		t.Errorf("after the tampered image: running %s, message %q", st.FirmwareVersion, st.Message)
	}
	if got, _ := os.ReadFile(filepath.Join(r.dir, "firmware", "current.img")); !bytes.Equal(got, image) {
		t.Error("refused image replaced the installed one")
	}
}

// A role's warnings reach the server on the node's log topic: a head
// command beyond the configured limits is clamped and said so.
func TestRoleWarningsReachTheLogTopic(t *testing.T) {
	r := newRig(t, simboard.Head)
	var logs []msg.NodeLog
	if _, err := bus.SubscribeJSON(r.client, msg.TopicNodeLogs, bus.QoS{Depth: 1000}, r.ex, func(topic string, v msg.NodeLog) {
		if topic != msg.NodeLogTopic("node-1") {
			t.Errorf("node log on %s", topic)
		}
		logs = append(logs, v)
	}); err != nil {
		t.Fatal(err)
	}
	r.run(time.Second)
	if resp := r.adopt("head", ""); !resp.Success {
		t.Fatalf("adopt: %+v", resp)
	}
	for i := 0; i < 30; i++ {
		if err := r.client.Publish(msg.TopicHeadCmd, msg.HeadCommand{Tilt: 120, Speed: 1}); err != nil {
			t.Fatal(err)
		}
		r.run(500 * time.Millisecond)
	}
	var clamps []msg.NodeLog
	for _, l := range logs {
		if l.Source == "head" && strings.Contains(l.Message, "clamped") {
			clamps = append(clamps, l)
		}
	}
	// 15 s of clamped commands: the first at once, the next no sooner than
	// 10 s later (the head re-alerts the same clamp after 10 s; the node's
	// own limit would hold back anything more often).
	if len(clamps) != 2 || clamps[0].Level != msg.NodeLogWarning || clamps[0].NodeID != "node-1" ||
		clamps[1].Timestamp-clamps[0].Timestamp < node.AlertRepeat.Seconds() {
		t.Fatalf("clamp alerts %+v, want two, 10 s apart", clamps)
	}
}

// The bus client tells the node how its link is: while down, and once back
// with what kept it out, the node's status says so; once back it sends
// its status and (unadopted) its announcement at once, so the server sees
// it again without waiting for the next period.
func TestBusLinkInStatus(t *testing.T) {
	r := newRig(t, simboard.Head)
	r.run(3 * time.Second)
	r.node.BusLink(false, "nats: authorization violation; 4 attempts in 2s, still trying")
	if m := r.node.Status().Message; !strings.Contains(m, "bus link down") || !strings.Contains(m, "authorization violation") {
		t.Errorf("status message while down: %q", m)
	}
	statuses, announced := len(r.statuses), len(r.announcements)
	r.node.BusLink(true, "after 5 failed attempts in 3s (the last: nats: authorization violation)")
	r.run(10 * time.Millisecond) // far less than a status or announcement period
	if len(r.statuses) == statuses || len(r.announcements) == announced {
		t.Fatalf("back on the bus: %d statuses and %d announcements since, want one of each at once",
			len(r.statuses)-statuses, len(r.announcements)-announced)
	}
	if m := r.statuses[len(r.statuses)-1].Message; !strings.Contains(m, "bus link back") || !strings.Contains(m, "5 failed attempts") {
		t.Errorf("status message once back: %q", m)
	}
	r.node.BusLink(true, "")
	if m := r.node.Status().Message; m != "" {
		t.Errorf("status message after a plain reconnection: %q, want none", m)
	}
}

// An unadopted node announces each free pin's level as the board reads it,
// and follows it when it changes: the tracks board's pull-downs hold the
// bridge enables low, GPIO4 has the SoC's power-on pull-up, and a wire
// pulling GPIO17 high shows in the next announcement.
func TestAnnouncementsCarryFreePinLevels(t *testing.T) {
	r := newRig(t, simboard.Tracks)
	r.run(time.Second)
	pins := func() map[string]msg.GPIOPin {
		a := r.announcements[len(r.announcements)-1]
		m := map[string]msg.GPIOPin{}
		for _, p := range a.Pins {
			m[p.PinName] = p
		}
		return m
	}
	for name, want := range map[string]string{"GPIO5": "low", "GPIO6": "low", "GPIO4": "high", "GPIO17": "low"} {
		if p := pins()[name]; p.CurrentState != want || p.InUse || p.Direction != "input" {
			t.Errorf("%s announced %+v, want a free input reading %s", name, p, want)
		}
	}
	if err := r.board.SetInput(17, gpio.High); err != nil {
		t.Fatal(err)
	}
	r.run(time.Second)
	if p := pins()["GPIO17"]; p.CurrentState != "high" {
		t.Errorf("GPIO17 pulled high announced %+v", p)
	}
}
