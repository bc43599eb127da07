package node

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/persist"
)

// Firmware files in the state directory, relative to it.
const (
	FirmwareCurrent        = "firmware/current.img"
	FirmwarePrevious       = "firmware/previous.img"
	firmwareRecord         = "firmware/installed.yaml"
	firmwarePreviousRecord = "firmware/previous.yaml"
	firmwareRejected       = "firmware/rejected.yaml"
	firmwareRejectedImage  = "firmware/rejected.img"
)

// RejectedFirmware is an image the node rolled back from.
type RejectedFirmware struct {
	Version  string `yaml:"version"`
	Checksum string `yaml:"checksum_sha256"`
	Reason   string `yaml:"reason"`
	At       string `yaml:"rejected_at"`
}

// Path returns the absolute path of a file in the store (name relative to
// the state directory, such as FirmwareCurrent).
func (s *Store) Path(name string) string { return s.path(name) }

// PreviousFirmware returns the record of the image kept as previous.img.
func (s *Store) PreviousFirmware() (InstalledFirmware, bool) {
	var f InstalledFirmware
	if found, err := persist.ReadYAML(s.path(firmwarePreviousRecord), &f); !found || err != nil {
		return InstalledFirmware{}, false
	}
	return f, true
}

// RollBackFirmware puts the previous image back: current.img becomes
// rejected.img (kept for diagnosis) and is recorded in rejected.yaml with
// reason; previous.img becomes current.img again. With no previous image
// the node falls back to the binary it was started as (the one the node
// was flashed with). It returns the record now current, ok false when none.
func (s *Store) RollBackFirmware(reason, at string) (InstalledFirmware, bool, error) {
	bad, _ := s.InstalledFirmware()
	if bad.Version != "" {
		if err := s.addRejected(RejectedFirmware{Version: bad.Version, Checksum: bad.Checksum, Reason: reason, At: at}); err != nil {
			return InstalledFirmware{}, false, err
		}
	}
	if err := os.Rename(s.path(FirmwareCurrent), s.path(firmwareRejectedImage)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return InstalledFirmware{}, false, fmt.Errorf("node: setting the failed image aside: %w", err)
	}
	if err := persist.Remove(s.path(firmwareRecord)); err != nil {
		return InstalledFirmware{}, false, err
	}
	prev, ok := s.PreviousFirmware()
	if _, err := os.Stat(s.path(FirmwarePrevious)); err != nil {
		ok = false
	}
	if !ok {
		return InstalledFirmware{}, false, persist.SyncDir(s.path("firmware"))
	}
	if err := os.Rename(s.path(FirmwarePrevious), s.path(FirmwareCurrent)); err != nil {
		return InstalledFirmware{}, false, fmt.Errorf("node: restoring the previous image: %w", err)
	}
	if err := os.Rename(s.path(firmwarePreviousRecord), s.path(firmwareRecord)); err != nil {
		return InstalledFirmware{}, false, fmt.Errorf("node: restoring the previous record: %w", err)
	}
	return prev, true, persist.SyncDir(s.path("firmware"))
}

// RejectedFirmware returns the rejection of version with checksum, if the
// node rolled back from exactly that image.
func (s *Store) RejectedFirmware(version, checksum string) (RejectedFirmware, bool) {
	for _, r := range s.rejected() {
		if r.Version == version && strings.EqualFold(r.Checksum, checksum) {
			return r, true
		}
	}
	return RejectedFirmware{}, false
}

func (s *Store) rejected() []RejectedFirmware {
	var list []RejectedFirmware
	data, err := os.ReadFile(s.path(firmwareRejected))
	if err != nil || yaml.Unmarshal(data, &list) != nil {
		return nil
	}
	return list
}

func (s *Store) addRejected(r RejectedFirmware) error {
	list := append(s.rejected(), r)
	if len(list) > 16 {
		list = list[len(list)-16:]
	}
	data, err := yaml.Marshal(list)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return persist.WriteFile(s.path(firmwareRejected), data, 0o644)
}

// ForgetRejectedFirmware clears the rejections, so a forced update may
// install an image that was rolled back once.
func (s *Store) ForgetRejectedFirmware() error {
	return persist.Remove(s.path(firmwareRejected))
}

// firmwareFloor is the anti-rollback floor, beside firmware/ rather than in
// it: a factory reset clears firmware/, never the floor.
const firmwareFloor = "firmware_floor.yaml"

// FirmwareFloor is firmware_floor.yaml: the highest firmware version this
// node has ever run or installed. An offer older than it is refused unless
// it carries the release key's downgrade permission for its version.
type FirmwareFloor struct {
	Version string `yaml:"version"`
	// At is when it was raised to Version (RFC 3339).
	At string `yaml:"raised_at"`
}

// FirmwareFloor returns the anti-rollback floor; ok is false when none is
// recorded yet. A damaged file is an error: the caller refuses every
// downgrade until the floor is written again.
func (s *Store) FirmwareFloor() (f FirmwareFloor, ok bool, err error) {
	found, err := persist.ReadYAML(s.path(firmwareFloor), &f)
	if !found {
		return FirmwareFloor{}, false, nil
	}
	if err != nil {
		return FirmwareFloor{}, false, fmt.Errorf("node: %w", err)
	}
	if strings.TrimSpace(f.Version) == "" {
		return f, false, fmt.Errorf("node: %s: version: missing (the file is empty or damaged)", firmwareFloor)
	}
	return f, true, nil
}

// RaiseFirmwareFloor records version as the floor when it is newer than
// the recorded one (compare orders versions), atomically: write, fsync,
// rename. It returns the floor in force afterwards. A damaged floor file
// is an error and is left as it is (MoveFirmwareFloorAside).
func (s *Store) RaiseFirmwareFloor(version, at string, compare func(a, b string) int) (FirmwareFloor, error) {
	cur, ok, err := s.FirmwareFloor()
	if err != nil {
		return cur, err
	}
	if ok && compare(version, cur.Version) <= 0 {
		return cur, nil
	}
	f := FirmwareFloor{Version: version, At: at}
	data, err := yaml.Marshal(f)
	if err != nil {
		return cur, fmt.Errorf("node: %w", err)
	}
	if err := persist.WriteFile(s.path(firmwareFloor), data, 0o644); err != nil {
		return cur, err
	}
	return f, nil
}

// MoveFirmwareFloorAside keeps a damaged floor file for inspection under
// another name (persist.MoveAside) so that a new floor can be written.
func (s *Store) MoveFirmwareFloorAside(now time.Time) (string, error) {
	return persist.MoveAside(s.path(firmwareFloor), now)
}
