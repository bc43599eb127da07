package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roleconfig"
)

// RoleRecord is role.yaml. It is written last when
// a node is adopted, so its presence means the role configuration beside it
// is complete.
type RoleRecord struct {
	AssignedRole   string `yaml:"assigned_role"`
	Instance       string `yaml:"instance,omitempty"`
	AssignedAt     string `yaml:"assigned_at"`
	AssignedBy     string `yaml:"assigned_by"`
	ConfigVersion  string `yaml:"config_version"`
	ConfigChecksum string `yaml:"config_checksum"`
	ServerAddress  string `yaml:"server_address,omitempty"`
}

// Identity is identity.yaml.
type Identity struct {
	NodeID      string `yaml:"node_id"`
	MACAddress  string `yaml:"mac_address"`
	DisplayName string `yaml:"display_name,omitempty"`
	FirstSeen   string `yaml:"first_seen"`
}

// InstalledFirmware records the image the node last installed.
type InstalledFirmware struct {
	Version  string `yaml:"version"`
	Checksum string `yaml:"checksum_sha256"`
	Size     int64  `yaml:"size_bytes"`
	At       string `yaml:"installed_at"`
}

// Store is a node's state directory (/var/lib/saint on a Pi):
//
//	role.yaml            assigned role (commit point of an adoption)
//	role_config.yaml     the role configuration downloaded at adoption
//	identity.yaml        node id, MAC, first seen
//	force_firmware       present after a factory reset: re-download firmware
//	firmware/current.img the installed image, firmware/previous.img the one before
//	firmware/installed.yaml, firmware/previous.yaml their records
//	firmware/rejected.yaml images rolled back, not to be installed again unforced
//	firmware/trial.yaml  an image on trial (see node/selfupdate)
//	firmware/download.part, download.yaml  a download in progress
//	firmware_floor.yaml  the newest firmware version ever run or installed:
//	                     older offers need a downgrade permission (kept
//	                     through a factory reset)
//	bus.nk, bus-ca.sha256, bus-ca.pem  the node's bus key, the server CA it
//	                     was enrolled with, the CA it met (saint-node)
type Store struct {
	dir string
	// now names the copies of damaged files; a node sets it to its
	// executor's clock.
	now func() time.Time
}

// NewStore returns the store in dir, creating it.
func NewStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("node: state directory not set")
	}
	if err := os.MkdirAll(filepath.Join(dir, "firmware"), 0o755); err != nil {
		return nil, fmt.Errorf("node: state directory: %w", err)
	}
	// A store opened outside a node (tools, tests) names the copies of
	// damaged files by the wall clock: they are for a person to read.
	return &Store{dir: dir, now: time.Now}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

// LoadRole returns the stored role and its configuration; ok is false when
// the node has no role. A role.yaml whose configuration is missing or does
// not match its checksum is an error: the caller treats the node as
// unadopted and says why. A role.yaml that is empty, null, truncated or
// garbled is moved aside (role.yaml.corrupt-<time>) first, and the error
// wraps persist.ErrDamaged.
func (s *Store) LoadRole() (rec RoleRecord, config []byte, ok bool, err error) {
	found, err := persist.ReadYAML(s.path("role.yaml"), &rec)
	if !found {
		return RoleRecord{}, nil, false, nil
	}
	if err != nil {
		return RoleRecord{}, nil, false, s.moveAside("role.yaml", err)
	}
	if rec.AssignedRole == "" {
		return rec, nil, false, errors.New("node: role.yaml: assigned_role is empty")
	}
	config, err = os.ReadFile(s.path("role_config.yaml"))
	if err != nil {
		return rec, nil, false, fmt.Errorf("node: role configuration: %w", err)
	}
	if sum := roleconfig.Checksum(config); rec.ConfigChecksum != "" && sum != rec.ConfigChecksum {
		return rec, nil, false, fmt.Errorf("node: role_config.yaml checksum %s does not match role.yaml's %s", sum[:12], rec.ConfigChecksum)
	}
	return rec, config, true, nil
}

// SaveRole stores a role: the configuration first, then role.yaml, each
// atomically, so a crash in between leaves the node unadopted rather than
// adopted with a missing configuration.
func (s *Store) SaveRole(rec RoleRecord, config []byte) error {
	rec.ConfigChecksum = roleconfig.Checksum(config)
	data, err := yaml.Marshal(rec)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := persist.WriteFile(s.path("role_config.yaml"), config, 0o644); err != nil {
		return err
	}
	return persist.WriteFile(s.path("role.yaml"), data, 0o644)
}

// ClearRole forgets the role (role.yaml first: that is the commit point).
func (s *Store) ClearRole() error {
	if err := persist.Remove(s.path("role.yaml")); err != nil {
		return err
	}
	return persist.Remove(s.path("role_config.yaml"))
}

// LoadIdentity returns identity.yaml; ok is false if there is none. A
// damaged identity.yaml (empty, null, truncated, garbled) is moved aside
// and reported with an error wrapping persist.ErrDamaged: the caller
// writes a new one from the board.
func (s *Store) LoadIdentity() (id Identity, ok bool, err error) {
	found, err := persist.ReadYAML(s.path("identity.yaml"), &id)
	if !found {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, s.moveAside("identity.yaml", err)
	}
	return id, true, nil
}

// moveAside keeps damaged state file name for inspection
// (name.corrupt-<time>) and returns why, wrapping err. Read errors that are
// not damage (permissions, I/O) leave the file where it is.
func (s *Store) moveAside(name string, err error) error {
	if !errors.Is(err, persist.ErrDamaged) {
		return fmt.Errorf("node: %w", err)
	}
	moved, mvErr := persist.MoveAside(s.path(name), s.now())
	if mvErr != nil {
		return fmt.Errorf("node: %w (and it could not be moved aside: %v)", err, mvErr)
	}
	return fmt.Errorf("node: %w; moved to %s", err, filepath.Base(moved))
}

// SaveIdentity writes identity.yaml.
func (s *Store) SaveIdentity(id Identity) error {
	data, err := yaml.Marshal(id)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return persist.WriteFile(s.path("identity.yaml"), data, 0o644)
}

// ForceFirmware reports whether a factory reset asked for a firmware
// re-download.
func (s *Store) ForceFirmware() bool {
	_, err := os.Stat(s.path("force_firmware"))
	return err == nil
}

// SetForceFirmware sets or clears the re-download flag.
func (s *Store) SetForceFirmware(on bool) error {
	if on {
		return persist.WriteFile(s.path("force_firmware"), []byte("factory reset\n"), 0o644)
	}
	return persist.Remove(s.path("force_firmware"))
}

// InstallFirmware stores a verified image as firmware/current.img, keeping
// the one before as firmware/previous.img (and its record as
// previous.yaml), and records it. The new image is written and synced in
// full before the swap, so a crash leaves either the old image current or
// the new one, never a torn file.
func (s *Store) InstallFirmware(image []byte, info InstalledFirmware) (string, error) {
	staged := s.path("firmware/staged.img")
	if err := persist.WriteFile(staged, image, 0o755); err != nil {
		return "", err
	}
	return s.install(staged, info)
}

// InstallFirmwareFile is InstallFirmware for an image already verified and
// synced to disk at path (a finished download): the file is moved into
// place rather than copied.
func (s *Store) InstallFirmwareFile(path string, info InstalledFirmware) (string, error) {
	if err := os.Chmod(path, 0o755); err != nil {
		return "", fmt.Errorf("node: installing firmware: %w", err)
	}
	cur, err := s.install(path, info)
	if err != nil {
		return "", err
	}
	// The record of the finished download goes with it.
	return cur, persist.Remove(s.path(downloadRecord))
}

// install swaps the synced image at staged in as current.img.
func (s *Store) install(staged string, info InstalledFirmware) (string, error) {
	cur := s.path(FirmwareCurrent)
	if _, err := os.Stat(cur); err == nil {
		if err := os.Rename(cur, s.path(FirmwarePrevious)); err != nil {
			return "", fmt.Errorf("node: keeping previous firmware: %w", err)
		}
		if err := os.Rename(s.path(firmwareRecord), s.path(firmwarePreviousRecord)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("node: keeping previous firmware record: %w", err)
		}
	}
	if err := os.Rename(staged, cur); err != nil {
		return "", fmt.Errorf("node: installing firmware: %w", err)
	}
	data, err := yaml.Marshal(info)
	if err != nil {
		return "", fmt.Errorf("node: %w", err)
	}
	return cur, persist.WriteFile(s.path(firmwareRecord), data, 0o644)
}

// InstalledFirmware returns the record of the last installed image.
func (s *Store) InstalledFirmware() (InstalledFirmware, bool) {
	var f InstalledFirmware
	if found, err := persist.ReadYAML(s.path(firmwareRecord), &f); !found || err != nil {
		return InstalledFirmware{}, false
	}
	return f, true
}

// ClearFirmware removes installed images (factory reset).
func (s *Store) ClearFirmware() error {
	for _, n := range []string{FirmwareCurrent, FirmwarePrevious, firmwareRecord, firmwarePreviousRecord} {
		if err := persist.Remove(s.path(n)); err != nil {
			return err
		}
	}
	return nil
}
