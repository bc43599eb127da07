package node_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/node"
	simboard "github.com/saint-os/saint/sim/board"
)

func TestInterruptedDownloadResumesAtItsOffset(t *testing.T) {
	r := newRig(t, simboard.Bare)
	r.run(time.Second)
	image := bytes.Repeat([]byte("0123456789"), 500) // five 1000-byte chunks
	r.srv.publish("1.1.0", image)
	r.srv.failAt = 2500
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.run(3 * time.Second)
	if want := []int64{0, 1000, 2000, 3000, 3000, 4000}; !slices.Equal(r.srv.offsets, want) {
		t.Errorf("download offsets %v, want %v: after the failure at 3000 the node resumes there, not at 0", r.srv.offsets, want)
	}
	got, err := os.ReadFile(filepath.Join(r.dir, node.FirmwareCurrent))
	if err != nil || !bytes.Equal(got, image) {
		t.Errorf("installed image differs from the published one (err %v)", err)
	}
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.1.0" {
		t.Errorf("running %s after the resumed download", st.FirmwareVersion)
	}
}

func TestRolledBackImageIsNotInstalledAgainUnlessForced(t *testing.T) {
	r := newRig(t, simboard.Bare)
	image := []byte("image 1.1.0 that failed its trial")
	sum := sha256.Sum256(image)
	// As after a rollback: the node runs 1.0.0 and remembers 1.1.0 failed.
	if _, err := r.node.Store().InstallFirmware(image, node.InstalledFirmware{Version: "1.1.0", Checksum: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.node.Store().RollBackFirmware("exited at start", "2026-11-22T10:00:00Z"); err != nil {
		t.Fatal(err)
	}
	r.srv.publish("1.1.0", image)
	r.run(2 * time.Second)
	st := r.statuses[len(r.statuses)-1]
	if r.srv.downloads != 0 || st.FirmwareVersion != "1.0.0" || r.state() != msg.StateUnadopted {
		t.Errorf("rejected image: %d downloads, running %s, state %s; want none, 1.0.0, UNADOPTED", r.srv.downloads, st.FirmwareVersion, r.state())
	}
	if !strings.Contains(st.Message, "1.1.0 was rolled back") || !strings.Contains(st.Message, "exited at start") {
		t.Errorf("status message %q does not say why 1.1.0 is not installed", st.Message)
	}
	// A newer image is not affected by the old rejection.
	r.srv.publish("1.2.0", []byte("image 1.2.0"))
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, &upd)
	r.run(2 * time.Second)
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.2.0" {
		t.Errorf("1.2.0 not installed after 1.1.0 was rejected: running %s", st.FirmwareVersion)
	}
}

func TestForcedUpdateInstallsARejectedImage(t *testing.T) {
	r := newRig(t, simboard.Bare)
	image := []byte("image 1.1.0, retried by hand")
	sum := sha256.Sum256(image)
	if _, err := r.node.Store().InstallFirmware(image, node.InstalledFirmware{Version: "1.1.0", Checksum: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.node.Store().RollBackFirmware("timed out", "2026-11-22T10:00:00Z"); err != nil {
		t.Fatal(err)
	}
	r.srv.publish("1.1.0", image)
	r.run(time.Second)
	var upd msg.NodeUpdateResponse
	r.call(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1", Force: true}, &upd)
	r.run(2 * time.Second)
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.1.0" {
		t.Errorf("forced update: running %s, want 1.1.0", st.FirmwareVersion)
	}
	if _, rejected := r.node.Store().RejectedFirmware("1.1.0", hex.EncodeToString(sum[:])); rejected {
		t.Error("the rejection outlived a forced install")
	}
}

func TestImageReplacedDuringDownloadStartsOver(t *testing.T) {
	r := newRig(t, simboard.Bare)
	r.run(time.Second)
	r.srv.publish("1.1.0", bytes.Repeat([]byte("a"), 5000))
	r.srv.failAt = 2500 // a pause, during which 1.2.0 replaces 1.1.0
	r.client.CallAsync(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, time.Second, r.ex, func(bus.Msg, error) {})
	r.run(500 * time.Millisecond) // into the pause after the failure at 3000
	if want := []int64{0, 1000, 2000, 3000}; !slices.Equal(r.srv.offsets, want) {
		t.Fatalf("offsets %v before the new release, want %v", r.srv.offsets, want)
	}
	newer := bytes.Repeat([]byte("b"), 3000)
	r.srv.publish("1.2.0", newer)
	r.run(3 * time.Second)
	got, err := os.ReadFile(filepath.Join(r.dir, node.FirmwareCurrent))
	if err != nil || !bytes.Equal(got, newer) {
		t.Errorf("installed %d bytes (err %v), want the 1.2.0 image", len(got), err)
	}
	if st := r.statuses[len(r.statuses)-1]; st.FirmwareVersion != "1.2.0" || r.state() != msg.StateUnadopted {
		t.Errorf("after the replaced download: running %s, state %s", st.FirmwareVersion, r.state())
	}
}

func TestDownloadResumesAfterARestart(t *testing.T) {
	r := newRig(t, simboard.Bare)
	r.run(time.Second)
	image := bytes.Repeat([]byte("0123456789"), 500)
	r.srv.publish("1.1.0", image)
	r.srv.failAt = 2500
	r.client.CallAsync(msg.NodeUpdateService("node-1"), msg.NodeUpdateRequest{NodeID: "node-1"}, time.Second, r.ex, func(bus.Msg, error) {})
	r.run(500 * time.Millisecond) // three chunks in, paused after the failure at 3000
	r.crash()
	r.srv.offsets = nil
	r.boot()
	r.run(3 * time.Second)
	if want := []int64{3000, 4000}; !slices.Equal(r.srv.offsets, want) {
		t.Errorf("after the restart the node asked for offsets %v, want %v: the first 3000 bytes were on disk", r.srv.offsets, want)
	}
	got, err := os.ReadFile(filepath.Join(r.dir, node.FirmwareCurrent))
	if err != nil || !bytes.Equal(got, image) {
		t.Errorf("installed image differs from the published one (err %v)", err)
	}
	for _, leftover := range []string{"firmware/download.part", "firmware/download.yaml"} {
		if _, err := os.Stat(filepath.Join(r.dir, leftover)); !os.IsNotExist(err) {
			t.Errorf("%s left after the install (%v)", leftover, err)
		}
	}
}

func TestPartialDownloadOfAnotherImageIsNotResumed(t *testing.T) {
	st, err := node.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendDownload("1.1.0", "aa", 100, 0, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendDownload("1.1.0", "aa", 100, 5, []byte("second")); err != nil {
		t.Fatal(err)
	}
	if got := st.PartialDownload("1.1.0", "AA", 100); string(got) != "firstsecond" {
		t.Errorf("partial = %q", got)
	}
	for _, other := range []struct {
		v, sum string
		size   int64
	}{{"1.2.0", "aa", 100}, {"1.1.0", "bb", 100}, {"1.1.0", "aa", 99}} {
		if got := st.PartialDownload(other.v, other.sum, other.size); got != nil {
			t.Errorf("PartialDownload(%+v) = %q, want nothing", other, got)
		}
	}
	if err := st.AppendDownload("1.1.0", "aa", 100, 50, []byte("gap")); err == nil {
		t.Error("a chunk past the end of the part was accepted")
	}
	// A chunk written again (its acknowledgement was lost) replaces itself.
	if err := st.AppendDownload("1.1.0", "aa", 100, 5, []byte("SECOND")); err != nil {
		t.Fatal(err)
	}
	if got := st.PartialDownload("1.1.0", "aa", 100); string(got) != "firstSECOND" {
		t.Errorf("after rewriting a chunk: %q", got)
	}
}
