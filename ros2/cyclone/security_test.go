package cyclone

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/ros2/sros2"
)

func enclave(t *testing.T, k *sros2.Keystore, name string, p sros2.Policy) Security {
	t.Helper()
	if _, err := k.CreateEnclave(name, p); err != nil {
		t.Fatal(err)
	}
	e, err := sros2.OpenEnclave(k.Dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return Security{IdentityCA: e.IdentityCA, Cert: e.Cert, Key: e.Key, PermissionsCA: e.PermissionsCA,
		Governance: e.Governance, Permissions: e.Permissions}
}

func newSecure(t *testing.T, domain uint32, s Security) *Participant {
	t.Helper()
	p, err := NewSecureParticipant(domain, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// stays says ok holds for the whole of d (a peer that must never match):
// the only way to show that something does not happen.
func stays(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !ok() {
			return false
		}
	}
	return true
}

// peerEnv names the Security (JSON; "{}" for none) a re-run of the test
// binary joins the test's domain with, as a peer in a process of its own:
// Cyclone DDS holds one access control state per process (the first
// participant's permissions), so a peer with other permissions, or
// without security, must be another process.
const peerEnv = "SAINT_CYCLONE_TEST_PEER"

// runPeer is that peer: it creates a writer on cmd_vel and writes Twists
// until killed, or prints "refused" when its permissions do not allow
// the writer.
func runPeer(spec string) {
	var s struct {
		Domain uint32
		Sec    *Security
		Speed  float64
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Println("bad spec:", err)
		os.Exit(2)
	}
	var p *Participant
	var err error
	if s.Sec == nil {
		p, err = NewParticipant(s.Domain)
	} else {
		p, err = NewSecureParticipant(s.Domain, *s.Sec)
	}
	if err != nil {
		fmt.Println("participant:", err)
		os.Exit(2)
	}
	w, err := p.NewWriter(peerTopic, peerType, QoS{Reliable: true})
	if err != nil {
		fmt.Println("refused")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	fmt.Println("writing")
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	for {
		_ = w.Write(twist(s.Speed, 0))
		time.Sleep(50 * time.Millisecond) // a 20 Hz publisher, until the test ends this process
	}
}

const (
	peerTopic = "rt/saint/tracks/cmd_vel"
	peerType  = "geometry_msgs::msg::dds_::Twist_"
)

// startPeer runs a peer process with sec (nil: no security) and returns
// its first line: "writing" or "refused".
func startPeer(t *testing.T, domain uint32, sec *Security, speed float64) string {
	t.Helper()
	spec, _ := json.Marshal(map[string]any{"Domain": domain, "Sec": sec, "Speed": speed})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"="+string(spec))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("peer %s:\n%s", spec, stderr.String())
		}
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestSecureParticipants: participants with enclaves of one keystore
// authenticate each other and exchange samples, in one process and from
// another; a participant without security, one whose identity comes from
// another keystore, and one whose permissions were signed by another CA
// never match the secured reader, and one whose own permissions do not
// allow publishing cmd_vel is refused the writer.
func TestSecureParticipants(t *testing.T) {
	domain := testDomain + 1
	k, err := sros2.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bridge := newSecure(t, domain, enclave(t, k, "/saint_bridge", sros2.Policy{}))
	var mu sync.Mutex
	speeds := map[float64]int{} // Twists received, by linear.x
	r, err := bridge.NewReader(peerTopic, peerType, QoS{Reliable: true}, func(d []byte) {
		mu.Lock()
		speeds[math.Float64frombits(binary.LittleEndian.Uint64(d[4:]))]++
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	received := func(speed float64) int {
		mu.Lock()
		defer mu.Unlock()
		return speeds[speed]
	}

	// Peers in processes of their own (Cyclone DDS keeps one access
	// control state per process). A permitted one first, to show that
	// such a peer matches within the time the others are given.
	permitted := enclave(t, k, "/workstation2", sros2.Policy{})
	if got := startPeer(t, domain, &permitted, 1); got != "writing" {
		t.Fatalf("permitted peer: %s", got)
	}
	checkFor(t, 20*time.Second, "the permitted peer's Twists", func() bool { return r.MatchedWriters() == 1 && received(1) > 0 })

	viewer := enclave(t, k, "/viewer", sros2.Policy{Publish: []string{}, Call: []string{}, Serve: []string{}})
	if got := startPeer(t, domain, &viewer, 2); got != "refused" {
		t.Errorf("a peer whose permissions do not allow publishing cmd_vel: %s, want the writer refused", got)
	}
	if got := startPeer(t, domain, nil, 3); got != "writing" {
		t.Fatalf("unsecured peer: %s", got)
	}
	other, err := sros2.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stranger := enclave(t, other, "/workstation", sros2.Policy{})
	if got := startPeer(t, domain, &stranger, 4); got != "writing" {
		t.Fatalf("peer of another keystore: %s", got)
	}
	// An identity of this keystore with permissions another CA signed.
	forged := enclave(t, k, "/forger", sros2.Policy{})
	od, err := other.CreateEnclave("/forger", sros2.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	forged.Permissions = filepath.Join(od, sros2.SignedPermissionsFile)
	forged.PermissionsCA = filepath.Join(od, sros2.PermissionsCAFile)
	forged.Governance = filepath.Join(od, sros2.EnclaveGovernanceFile)
	if got := startPeer(t, domain, &forged, 5); got != "writing" {
		t.Fatalf("peer with forged permissions: %s", got)
	}
	// Only the two permitted writers ever match, within twice the time
	// the permitted peer took.
	if !stays(10*time.Second, func() bool { return r.MatchedWriters() == 1 }) {
		t.Errorf("the secured reader matched %d writers, want 1 (the permitted peer's)", r.MatchedWriters())
	}
	for speed, who := range map[float64]string{3: "the unsecured peer", 4: "the other keystore's peer", 5: "the peer with forged permissions"} {
		if n := received(speed); n > 0 {
			t.Errorf("%d Twists from %s", n, who)
		}
	}
	if received(1) == 0 {
		t.Error("the permitted peer's Twists stopped")
	}
}

func TestSecureParticipantNamesMissingFiles(t *testing.T) {
	k, err := sros2.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := enclave(t, k, "/saint_bridge", sros2.Policy{})
	if err := os.Remove(s.Permissions); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSecureParticipant(testDomain, s); err == nil {
		t.Error("a participant was created without its permissions")
	}
}
