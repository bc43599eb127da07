package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/node/fetch"
)

func (n *Node) checkFirmware(gen uint64) {
	req := msg.FirmwareCheckRequest{
		NodeID:         n.id,
		CurrentVersion: n.version,
		HardwareRev:    n.o.Board.Info().HardwareRev,
		Force:          n.store.ForceFirmware(),
	}
	if inst, ok := n.store.InstalledFirmware(); ok {
		req.CurrentChecksum = inst.Checksum
	}
	n.o.Bus.CallAsync(msg.ServiceFirmwareCheck, req, n.o.CallTimeout, n.o.Exec, func(m bus.Msg, err error) {
		if gen != n.gen {
			return
		}
		var resp msg.FirmwareCheckResponse
		if err == nil {
			err = m.Decode(&resp)
		}
		if err != nil {
			n.setMessage("waiting for server: firmware check: %v", err)
			n.publishStatus()
			n.later(gen, n.checkFirmware)
			return
		}
		if !resp.UpdateAvailable {
			if req.Force {
				// Nothing to re-download: the server has no image.
				_ = n.store.SetForceFirmware(false)
			}
			n.checkRole(gen)
			return
		}
		if rej, bad := n.store.RejectedFirmware(resp.Version, resp.ChecksumSHA256); bad && !req.Force {
			// An image this node rolled back from is not tried again
			// unless an update is forced.
			n.setMessage("firmware %s was rolled back (%s); staying on %s until an update is forced", resp.Version, rej.Reason, n.version)
			n.publishStatus()
			n.checkRole(gen)
			return
		}
		if err := n.checkSignature(resp); err != nil {
			// A forged or unsigned offer: nothing is downloaded, the node
			// runs on as it is.
			n.setMessage("firmware %s refused: %v; still running %s", resp.Version, err, n.version)
			n.log.Error("firmware refused", "version", resp.Version, "err", err)
			n.publishStatus()
			n.checkRole(gen)
			return
		}
		if err := n.checkRollback(resp); err != nil {
			// A rollback to an older image: nothing is downloaded.
			n.setMessage("firmware %s refused: %v; still running %s", resp.Version, err, n.version)
			n.log.Error("firmware downgrade refused", "version", resp.Version, "floor", n.floor, "err", err)
			n.publishStatus()
			n.checkRole(gen)
			return
		}
		n.fire(EvUpdateAvailable)
		n.setMessage("downloading firmware %s", resp.Version)
		if n.o.Fetcher != nil && resp.URL != "" {
			n.fetch(gen, resp)
			return
		}
		// Resume a download a restart interrupted.
		part := n.store.PartialDownload(resp.Version, resp.ChecksumSHA256, resp.SizeBytes)
		if len(part) > 0 {
			n.log.Info("resuming firmware download", "version", resp.Version, "offset", len(part), "size", resp.SizeBytes)
		}
		n.download(gen, resp, append(make([]byte, 0, resp.SizeBytes), part...))
	})
}

// loadFloor reads the anti-rollback floor and raises it to the running
// version. A damaged floor file is moved aside and logged; the floor is
// then the running version.
func (n *Node) loadFloor() {
	if _, _, err := n.store.FirmwareFloor(); err != nil {
		aside, merr := n.store.MoveFirmwareFloorAside(n.o.Exec.Now())
		n.log.Error("firmware floor damaged; moved aside, the floor is now the running version", "err", err, "moved_to", aside, "move_err", merr)
	}
	n.floor = n.version
	n.raiseFloor(n.version)
}

// raiseFloor makes version the anti-rollback floor if it is newer than the
// floor, on disk and in memory (the memory holds even when the disk
// fails).
func (n *Node) raiseFloor(version string) {
	if fwsign.CompareVersions(version, n.floor) > 0 {
		n.floor = version
	}
	f, err := n.store.RaiseFirmwareFloor(version, n.o.Exec.Now().UTC().Format(time.RFC3339), fwsign.CompareVersions)
	if err != nil {
		n.log.Error("firmware floor not saved", "version", version, "err", err)
		return
	}
	if fwsign.CompareVersions(f.Version, n.floor) > 0 {
		n.floor = f.Version
	}
}

// FirmwareFloor is the anti-rollback floor: the newest firmware version
// this node has run or installed. Call it on the executor.
func (n *Node) FirmwareFloor() string { return n.floor }

// checkRollback refuses an offer older than the floor unless it carries
// the release key's downgrade permission for its version.
func (n *Node) checkRollback(offer msg.FirmwareCheckResponse) error {
	if fwsign.CompareVersions(offer.Version, n.floor) >= 0 {
		return nil
	}
	if err := fwsign.VerifyDowngrade(n.o.FirmwareKeys, offer.Version, offer.DowngradeSignature); err != nil {
		return fmt.Errorf("%s is older than %s, the newest firmware this node has installed: %w", offer.Version, n.floor, err)
	}
	n.log.Warn("firmware downgrade permitted by the release key", "version", offer.Version, "floor", n.floor)
	return nil
}

// checkSignature checks an offer's signature against the trusted release
// keys (see Options.FirmwareKeys). The image is then held to the signed
// sha256 and size by the download.
func (n *Node) checkSignature(offer msg.FirmwareCheckResponse) error {
	if len(n.o.FirmwareKeys) == 0 && !n.o.RequireSignedFirmware {
		return nil
	}
	return fwsign.Verify(n.o.FirmwareKeys, offer.Version, offer.ChecksumSHA256, offer.SizeBytes, offer.Signature)
}

// fetch downloads the offered image over HTTP on a goroutine, into the
// store's download file (continuing a part a restart interrupted), and
// hands the outcome back to the executor.
func (n *Node) fetch(gen uint64, want msg.FirmwareCheckResponse) {
	if n.fetching {
		// A download of an earlier boot is still writing the file: end
		// it, and check again once it has.
		n.stopFetch()
		n.refetch = true
		return
	}
	path, err := n.store.DownloadFile(want.Version, want.ChecksumSHA256, want.SizeBytes)
	if err != nil {
		n.setMessage("firmware %s not downloaded: %v", want.Version, err)
		n.publishStatus()
		n.later(gen, n.checkFirmware)
		return
	}
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		n.log.Info("resuming firmware download", "version", want.Version, "offset", st.Size(), "size", want.SizeBytes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.stopFetch, n.fetching = cancel, true
	fetcher, ex := n.o.Fetcher, n.o.Exec
	go func() {
		err := fetcher.Fetch(ctx, want.URL, path, want.SizeBytes, want.ChecksumSHA256)
		ex.Post(func() { n.fetched(gen, want, path, err) })
	}()
}

// fetched installs a finished HTTP download, refuses one whose sha256 is
// wrong, and otherwise asks the server again after a pause: the part on
// disk is continued when the offer is still the same image.
func (n *Node) fetched(gen uint64, want msg.FirmwareCheckResponse, path string, err error) {
	n.stopFetch()
	n.stopFetch, n.fetching = nil, false
	if n.refetch {
		n.refetch = false
		n.checkFirmware(n.gen)
		return
	}
	if gen != n.gen {
		return
	}
	switch {
	case errors.Is(err, fetch.ErrChecksum):
		if err := n.store.ClearDownload(); err != nil {
			n.log.Warn("clearing the download", "err", err)
		}
		n.setMessage("firmware %s refused: %v; still running %s", want.Version, err, n.version)
		n.log.Error("firmware refused", "version", want.Version, "err", err)
		n.publishStatus()
		n.checkRole(gen)
	case err != nil:
		n.setMessage("firmware download paused: %v", err)
		n.log.Warn("firmware download paused", "version", want.Version, "err", err)
		n.publishStatus()
		n.later(gen, n.checkFirmware)
	default:
		installed, err := n.store.InstallFirmwareFile(path, InstalledFirmware{
			Version: want.Version, Checksum: strings.ToLower(want.ChecksumSHA256), Size: want.SizeBytes,
			At: n.o.Exec.Now().UTC().Format(time.RFC3339),
		})
		n.applyFirmware(gen, want, installed, want.SizeBytes, err)
	}
}

// download fetches the image chunk by chunk, then verifies and applies it.
func (n *Node) download(gen uint64, want msg.FirmwareCheckResponse, image []byte) {
	req := msg.FirmwareDownloadRequest{NodeID: n.id, Version: want.Version, Offset: int64(len(image))}
	n.o.Bus.CallAsync(msg.ServiceFirmwareDownload, req, n.o.CallTimeout, n.o.Exec, func(m bus.Msg, err error) {
		if gen != n.gen {
			return
		}
		var resp msg.FirmwareDownloadResponse
		if err == nil {
			err = m.Decode(&resp)
		}
		if err == nil && !resp.Success && resp.Version != "" && resp.Version != want.Version {
			// A newer image was published during the download: start over
			// with it rather than ask for a version that is gone.
			n.log.Info("firmware replaced on the server during the download", "was", want.Version, "now", resp.Version)
			n.setMessage("firmware %s replaced by %s on the server; checking again", want.Version, resp.Version)
			n.checkFirmware(gen)
			return
		}
		if err == nil && !resp.Success {
			err = errors.New(resp.Message)
		}
		if err == nil && resp.Offset != req.Offset {
			err = fmt.Errorf("server sent offset %d, asked for %d", resp.Offset, req.Offset)
		}
		if err != nil {
			// Keep what we have and resume from there.
			n.setMessage("firmware download paused at %d bytes: %v", len(image), err)
			n.publishStatus()
			n.later(gen, func(g uint64) { n.download(g, want, image) })
			return
		}
		if err := n.store.AppendDownload(want.Version, want.ChecksumSHA256, resp.SizeBytes, req.Offset, resp.Data); err != nil {
			n.log.Warn("download not kept on disk; it will not survive a restart", "err", err)
		}
		image = append(image, resp.Data...)
		if int64(len(image)) < resp.SizeBytes && len(resp.Data) > 0 {
			n.download(gen, want, image)
			return
		}
		n.installFirmware(gen, want, image)
	})
}

func (n *Node) installFirmware(gen uint64, want msg.FirmwareCheckResponse, image []byte) {
	// Installed or refused, the download is done with.
	if err := n.store.ClearDownload(); err != nil {
		n.log.Warn("clearing the download", "err", err)
	}
	sum := sha256.Sum256(image)
	got := hex.EncodeToString(sum[:])
	if !strings.EqualFold(got, want.ChecksumSHA256) {
		n.setMessage("firmware %s refused: sha256 %s does not match the published %s; still running %s",
			want.Version, short(got), short(want.ChecksumSHA256), n.version)
		n.log.Error("firmware refused", "version", want.Version, "got_sha256", got, "want_sha256", want.ChecksumSHA256)
		n.publishStatus()
		n.checkRole(gen)
		return
	}
	path, err := n.store.InstallFirmware(image, InstalledFirmware{
		Version: want.Version, Checksum: got, Size: int64(len(image)),
		At: n.o.Exec.Now().UTC().Format(time.RFC3339),
	})
	n.applyFirmware(gen, want, path, int64(len(image)), err)
}

// applyFirmware hands an image installed at path (or the error installing
// it) to the Updater and reboots the node's logic into the new version.
func (n *Node) applyFirmware(gen uint64, want msg.FirmwareCheckResponse, path string, size int64, err error) {
	if err == nil {
		// The download is done: clear a forced re-download before Apply,
		// which on a real node re-executes and does not return.
		_ = n.store.SetForceFirmware(false)
		_ = n.store.ForgetRejectedFirmware()
		// The floor rises with every version installed, before a real
		// node re-executes into it.
		n.raiseFloor(want.Version)
	}
	if err == nil && n.o.Updater != nil {
		err = n.o.Updater.Apply(path, want.Version)
	}
	if err != nil {
		n.setMessage("firmware %s not applied: %v; still running %s", want.Version, err, n.version)
		n.log.Error("firmware not applied", "version", want.Version, "err", err)
		n.publishStatus()
		n.checkRole(gen)
		return
	}
	n.log.Info("firmware installed", "version", want.Version, "bytes", size)
	n.version = want.Version
	n.setMessage("firmware %s installed", want.Version)
	n.fire(EvUpdateApplied)
	n.boot()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func (n *Node) handleUpdate(m bus.Msg, reply bus.Reply) {
	var req msg.NodeUpdateRequest
	_ = m.Decode(&req)
	if n.state == msg.StateUpdating || n.state == msg.StateAdopting || n.state == msg.StateBoot {
		reply(msg.NodeUpdateResponse{Message: "node is " + n.state + "; try again when it is settled"}, nil)
		return
	}
	reply(msg.NodeUpdateResponse{Success: true, Message: n.id + ": checking for firmware"}, nil)
	n.o.Exec.Post(func() {
		if req.Force {
			_ = n.store.SetForceFirmware(true)
		}
		n.stopRole()
		n.setMessage("rebooting to check for firmware")
		if n.fire(EvReboot) {
			n.boot()
		}
	})
}
