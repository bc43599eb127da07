package cyclone

import (
	"testing"
	"time"

	"github.com/saint-os/saint/internal/rtpspeer"
)

// A peer whose type object has int8 and uint8 members (XTypes 1.3's
// TK_INT8 and TK_UINT8, unknown to Cyclone DDS 0.10.2) announces a writer
// and a reader on the participant's topics with that type's
// TypeInformation and sends the TypeLookup reply carrying the type
// object, unasked and on request. Cyclone DDS 0.10.2 dereferences a NULL
// member type validating such an object (eclipse-cyclonedds#1554), so a
// participant that resolved it would die here with SIGSEGV, and the test
// binary with it. The participant must neither ask for the type (its own
// types carry no type information, so endpoints match by type name) nor
// take the type object when it comes unasked, and keep serving.
func TestPeerWithInt8TypeObjectCannotCrashParticipant(t *testing.T) {
	const typ = "geometry_msgs::msg::dds_::Twist_"
	bridge, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer bridge.Close()
	echo, err := bridge.NewWriter("rt/test/xtypes/echo", typ, QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := bridge.NewReader("rt/test/xtypes/cmd_vel", typ, QoS{Reliable: true}, func(d []byte) { _ = echo.Write(d) })
	if err != nil {
		t.Fatal(err)
	}

	peer, err := rtpspeer.Start(rtpspeer.Options{Domain: testDomain, Endpoints: []rtpspeer.Endpoint{
		{Topic: "rt/test/xtypes/cmd_vel", TypeName: typ}, {Topic: "rt/test/xtypes/echo", TypeName: typ}}})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	// The peer's writer matched by name: the participant has its
	// endpoints, and with them the type id the replies resolve.
	checkFor(t, 10*time.Second, "the participant to match the int8 peer's writer", func() bool { return cmd.MatchedWriters() >= 1 })
	sent := peer.RepliesSent()
	checkFor(t, 10*time.Second, "20 more TypeLookup replies", func() bool { return peer.RepliesSent() >= sent+20 })

	client, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	got := make(chan []byte, 10)
	r, err := client.NewReader("rt/test/xtypes/echo", typ, QoS{Reliable: true}, func(d []byte) { got <- d })
	if err != nil {
		t.Fatal(err)
	}
	w, err := client.NewWriter("rt/test/xtypes/cmd_vel", typ, QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, "the client to match the participant", func() bool {
		return r.MatchedWriters() >= 1 && w.MatchedReaders() >= 2 // the participant's reader and the peer's
	})
	want := twist(0.25, 0.5)
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if string(d) != string(want) {
			t.Errorf("echoed % x\nwant % x", d, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the participant no longer serves after the int8 peer's type object")
	}
	if n := peer.TypeRequests(); n != 0 {
		t.Errorf("the participant asked the peer for its type %d times: matching went through type lookup", n)
	}
	if len(peer.Heard()) == 0 {
		t.Error("the peer heard no participant: it was never discovered, and tested nothing")
	}
}
