package node_test

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fwsign"
	simboard "github.com/saint-os/saint/sim/board"
)

// A node that trusts a release key refuses an image whose sha256 is right
// but whose offer is unsigned, signed by another key, or carries the
// signature of another release — downloading nothing and staying ACTIVE in
// its role — and installs the one the key signed.
func TestOnlySignedFirmwareIsInstalled(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, forger, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRigWith(t, simboard.Console, func(r *rig) { r.firmwareKeys = []ed25519.PublicKey{pub} })
	r.run(time.Second)
	if resp := r.adopt("console", ""); !resp.Success {
		t.Fatalf("adopt: %+v", resp)
	}
	r.run(time.Second)
	if r.state() != msg.StateActive {
		t.Fatalf("state %s after adoption", r.state())
	}

	image := bytes.Repeat([]byte{0xA5, 0x5A, 0x00}, 2000)
	sign := func(k ed25519.PrivateKey, version string) string {
		return fwsign.Sign(k, version, r.srv.sum, int64(len(r.srv.image)))
	}
	r.srv.publish("1.1.0", image)
	signed110 := sign(priv, "1.1.0")
	for _, c := range []struct{ name, version, sig string }{
		{"unsigned", "1.1.0", ""},
		{"signed by another key", "1.1.0", sign(forger, "1.1.0")},
		{"another release's signature", "1.2.0", signed110},
		{"not a signature", "1.1.0", "c2lnbmF0dXJl"},
	} {
		r.srv.publish(c.version, image)
		r.srv.sig = c.sig
		before, from := r.srv.downloads, len(r.statuses)
		var upd msg.NodeUpdateResponse
		r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
		r.run(2 * time.Second)
		st := r.statuses[len(r.statuses)-1]
		if st.FirmwareVersion != "1.0.0" || r.state() != msg.StateActive {
			t.Errorf("%s: running %s in state %s, want 1.0.0 and ACTIVE", c.name, st.FirmwareVersion, r.state())
		}
		said := false
		for _, s := range r.statuses[from:] {
			said = said || strings.Contains(s.Message, "refused") && strings.Contains(s.Message, "sign")
		}
		if !said {
			t.Errorf("%s: no status says the image was refused for its signature", c.name)
		}
		if r.srv.downloads != before {
			t.Errorf("%s: %d download requests for a refused offer", c.name, r.srv.downloads-before)
		}
		if _, ok := r.node.Store().InstalledFirmware(); ok {
			t.Errorf("%s: an image was installed", c.name)
		}
	}

	r.srv.publish("1.1.0", image)
	r.srv.sig = signed110
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.run(3 * time.Second)
	if inst, ok := r.node.Store().InstalledFirmware(); !ok || inst.Version != "1.1.0" {
		t.Errorf("the signed image: installed %+v (%v), want 1.1.0", inst, ok)
	}
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.1.0" {
		t.Errorf("the signed image: running %s, want 1.1.0", st.FirmwareVersion)
	}
}
