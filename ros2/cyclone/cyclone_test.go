package cyclone

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// testDomain is a DDS domain of this test run's own, so that runs on one
// machine do not see each other.
var testDomain = uint32(100 + rand.IntN(100))

func TestMain(m *testing.M) {
	os.Setenv("CYCLONEDDS_URI", LoopbackConfig)
	if spec := os.Getenv(peerEnv); spec != "" {
		runPeer(spec)
	}
	os.Exit(m.Run())
}

func twist(x, z float64) []byte {
	b := []byte{0, 1, 0, 0}
	for _, f := range []float64{x, 0, 0, 0, 0, z} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// checkFor waits up to d for ok; the name stays for the many call sites.
func checkFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	bustest.WaitUntil(t, d, what, ok)
}

func TestWriteAndTakeBetweenParticipants(t *testing.T) {
	a, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const typ = "geometry_msgs::msg::dds_::Twist_"
	got := make(chan []byte, 10)
	r, err := b.NewReader("rt/test/cmd_vel", typ, QoS{Reliable: true}, func(d []byte) { got <- d })
	if err != nil {
		t.Fatal(err)
	}
	w, err := a.NewWriter("rt/test/cmd_vel", typ, QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, "the reader to match the writer", func() bool { return r.MatchedWriters() == 1 && w.MatchedReaders() == 1 })
	want := twist(0.5, -1)
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if string(d) != string(want) {
			t.Errorf("took % x\nwant % x", d, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no sample")
	}

	if err := w.Write(want[:20]); err == nil {
		t.Error("writing a truncated Twist: no error")
	}
	if _, err := a.NewWriter("rt/test/x", "nope::msg::dds_::X_", QoS{}); err == nil {
		t.Error("a writer of an unknown type: no error")
	}
	if _, err := a.NewWriter("rt/test/cmd_vel", "nav_msgs::msg::dds_::Odometry_", QoS{}); err == nil {
		t.Error("a second type on one topic: no error")
	}
}

// Cyclone reads CYCLONEDDS_URI when a participant creates its domain: a
// configuration naming an interface this machine does not have fails.
func TestCycloneDDSURIIsHonoured(t *testing.T) {
	t.Setenv("CYCLONEDDS_URI", `<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name="saint-no-such-if0"/></Interfaces></General></Domain></CycloneDDS>`)
	p, err := NewParticipant(testDomain + 1)
	if err == nil {
		p.Close()
		t.Fatal("a participant came up on an interface that does not exist: CYCLONEDDS_URI was ignored")
	}
	t.Log(err)
}
