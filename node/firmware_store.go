package node

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
