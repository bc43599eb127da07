package firmware

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/persist"
)

// Files of the tree, relative to the firmware directory.
const (
	ManifestPath  = "manifest.json"
	ChecksumPath  = ImagePath + ".sha256"
	ChangelogPath = "current/changelog.md"
	ArchiveDir    = "archive"
	ConfigsDir    = "configs"
)

// versionPattern is what a firmware version may look like: dotted numbers
// with an optional leading "v" and pre-release or build suffix. It also
// keeps a version safe to use as the name of its archive directory.
var versionPattern = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+){0,3}([-+][0-9A-Za-z][0-9A-Za-z.-]*)?$`)

// hardwareRevPattern is a hardware revision: dotted numbers.
var hardwareRevPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,3}$`)

// datePattern is a release date, YYYY-MM-DD.
var datePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// FieldError is a release that cannot be published, naming the field at
// fault and what was expected of it: the project's field error.
type FieldError = fielderr.Error

// ErrNotNewer is the cause of the version's FieldError when the version
// is valid but not newer than the one published: the request was well
// formed, the repository's state refuses it.
var ErrNotNewer = errors.New("not newer than the published release")

func fieldErr(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

// Validate checks the fields a publisher sets: version, release_date,
// min_hardware_rev. Checksum and size are computed from the image.
func (rel Release) Validate() error {
	switch {
	case rel.Version == "":
		return fieldErr("version", "missing; want a version such as 1.2.0")
	case !versionPattern.MatchString(rel.Version):
		return fieldErr("version", "%q is not a version; want dotted numbers such as 1.2.0", rel.Version)
	case !datePattern.MatchString(rel.ReleaseDate):
		return fieldErr("release_date", "%q: want YYYY-MM-DD", rel.ReleaseDate)
	case rel.MinHardwareRev != "" && !hardwareRevPattern.MatchString(rel.MinHardwareRev):
		return fieldErr("min_hardware_rev", "%q: want dotted numbers such as 1.0", rel.MinHardwareRev)
	}
	return nil
}

// ArchivePath is where a version's image is kept once a newer one is
// published: archive/v<version>/ (for example archive/v1.1.0/).
func ArchivePath(version string) string {
	return ArchiveDir + "/v" + strings.TrimPrefix(version, "v")
}

// Publish writes a firmware tree into dir for image: current/saint_node.img
// and its .sha256, current/changelog.md, manifest.json (with the
// configurations of configDir, also copied to configs/). A version already
// current in dir is moved to archive/v<version>/ first. It is what
// `make firmware` and `saintctl firmware publish` use.
func Publish(dir, configDir string, image []byte, rel Release) (*Manifest, error) {
	configs := map[string]roleConfig{}
	if configDir != "" {
		if _, err := os.Stat(configDir); err != nil {
			return nil, fmt.Errorf("firmware: %w", err)
		}
		if err := readConfigs(configDir, configs); err != nil {
			return nil, err
		}
	}
	return writeRelease(dir, configs, memoryImage(image), rel)
}

// releaseImage is the image being published: in memory, or staged in a
// file of the repository (an upload), which is then renamed into place
// rather than copied.
type releaseImage struct {
	data   []byte
	staged *os.File
	sum    [sha256.Size]byte
	size   int64
}

func memoryImage(data []byte) releaseImage {
	return releaseImage{data: data, sum: sha256.Sum256(data), size: int64(len(data))}
}

// install puts the image at path with perm, durably.
func (img releaseImage) install(path string, perm os.FileMode) error {
	if img.staged == nil {
		return writeFile(path, img.data, perm)
	}
	if err := img.staged.Chmod(perm); err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	if err := img.staged.Sync(); err != nil {
		return fmt.Errorf("firmware: syncing the uploaded image: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	if err := os.Rename(img.staged.Name(), path); err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	return persist.SyncDir(filepath.Dir(path))
}

// Publish makes image the repository's current firmware, archiving the
// one before, and reloads. Downloads in progress wait for it and then see
// the new version (their old one is refused by version, so no chunk mixes
// two images). The manifest lists the repository's role configurations.
func (r *Repository) Publish(image []byte, rel Release) (*Manifest, error) {
	return r.publish(memoryImage(image), rel)
}

func (r *Repository) publish(image releaseImage, rel Release) (*Manifest, error) {
	if r.dir == "" {
		return nil, errors.New("firmware: the repository has no directory to publish into")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest != nil && r.problem == "" {
		// An older release goes back only with the release key's
		// downgrade permission, which writeRelease verifies.
		if c := CompareVersions(rel.Version, r.manifest.Firmware.Version); c == 0 || c < 0 && rel.DowngradeSignature == "" {
			return nil, &FieldError{Field: "version", Err: ErrNotNewer,
				Message: fmt.Sprintf("%s is not newer than the current %s (an older release needs the release key's downgrade permission: saintctl firmware upload --allow-downgrade)", rel.Version, r.manifest.Firmware.Version)}
		}
	}
	m, err := writeRelease(r.dir, r.configs, image, rel)
	if err != nil {
		return nil, err
	}
	return m, r.reloadLocked()
}

func writeRelease(dir string, configs map[string]roleConfig, image releaseImage, rel Release) (*Manifest, error) {
	if err := rel.Validate(); err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	if image.size == 0 {
		return nil, fmt.Errorf("firmware: %w", fieldErr("image", "empty"))
	}
	rel.ChecksumSHA256 = hex.EncodeToString(image.sum[:])
	rel.SizeBytes = image.size
	if rel.Signature != "" || rel.SigningKey != "" {
		if err := VerifyRelease(rel); err != nil {
			return nil, fmt.Errorf("firmware: %w", err)
		}
	}
	if rel.DowngradeSignature != "" {
		if err := VerifyDowngrade(rel); err != nil {
			return nil, fmt.Errorf("firmware: %w", err)
		}
	}
	m := &Manifest{Firmware: rel, Configs: map[string]ConfigVersion{}, SupportedRoles: []string{}}
	for key, c := range configs {
		m.Configs[key] = ConfigVersion{Version: c.version, Checksum: c.checksum}
		m.SupportedRoles = append(m.SupportedRoles, key)
		if err := writeFile(filepath.Join(dir, ConfigsDir, key+".yaml"), c.data, 0o644); err != nil {
			return nil, err
		}
	}
	sort.Strings(m.SupportedRoles)

	previousLog, err := archiveCurrent(dir, rel.Version)
	if err != nil {
		return nil, err
	}
	// archive/ is part of the tree from the first release on, empty until
	// a second one is published.
	if err := os.MkdirAll(filepath.Join(dir, ArchiveDir), 0o755); err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	entry := "## " + rel.Version + " (" + rel.ReleaseDate + ")\n\n" + strings.TrimSpace(rel.Changelog) + "\n"
	changelog := "# SAINT.OS node firmware changelog\n\n" + entry
	if previousLog != "" {
		changelog += "\n" + previousLog
	}
	if err := image.install(filepath.Join(dir, filepath.FromSlash(ImagePath)), 0o755); err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{ChecksumPath, []byte(rel.ChecksumSHA256 + "  saint_node.img\n"), 0o644},
		{ChangelogPath, []byte(changelog), 0o644},
		// The manifest goes last: it is what makes the new image visible.
		{ManifestPath, append(manifest, '\n'), 0o644},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.name)), f.data, f.perm); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// archiveCurrent keeps the version dir currently publishes (if any, and if
// it is not the one being published again) in archive/v<version>/: image,
// .sha256 and manifest.json. It returns the current changelog's entries
// (without its title) for the new changelog to continue.
func archiveCurrent(dir, newVersion string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestPath))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("firmware: %w", err)
	}
	var prev Manifest
	if err := json.Unmarshal(data, &prev); err != nil || !versionPattern.MatchString(prev.Firmware.Version) {
		// An unreadable old manifest is replaced, not archived.
		return "", nil
	}
	log := ""
	if old, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ChangelogPath))); err == nil {
		log = string(old)
		if i := strings.Index(log, "\n## "); strings.HasPrefix(log, "# ") && i >= 0 {
			log = log[i+1:]
		}
	}
	if prev.Firmware.Version == newVersion {
		// Publishing the same version again replaces it; its old entry goes.
		if i := strings.Index(log, "\n## "); strings.HasPrefix(log, "## "+newVersion+" ") && i >= 0 {
			return log[i+1:], nil
		}
		if strings.HasPrefix(log, "## "+newVersion+" ") {
			return "", nil
		}
		return log, nil
	}
	archive := filepath.Join(dir, filepath.FromSlash(ArchivePath(prev.Firmware.Version)))
	for _, name := range []string{ImagePath, ChecksumPath} {
		src := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := linkOrCopy(src, filepath.Join(archive, filepath.Base(name))); err != nil {
			return "", err
		}
	}
	if err := writeFile(filepath.Join(archive, ManifestPath), data, 0o644); err != nil {
		return "", err
	}
	return log, nil
}

// linkOrCopy puts src's content at dst: a hard link when the file system
// allows (no copy of a 20 MB image), a durable copy otherwise.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return persist.SyncDir(filepath.Dir(dst))
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	defer in.Close()
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	return writeFile(dst, data, 0o644)
}

func writeFile(p string, data []byte, perm os.FileMode) error {
	return persist.WriteFile(p, data, perm)
}

// PermitDowngrade signs, with the release key, a downgrade permission for
// the release dir publishes and writes it into its manifest.json
// (atomically): nodes that have installed a newer version then take this
// one when an update is forced. version must be the published one, and
// the release must be signed by the same key. A running server reads the
// manifest when it starts.
func PermitDowngrade(dir string, key ed25519.PrivateKey, version string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestPath)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("firmware: %s: %w", path, err)
	}
	if m.Firmware.Version != version {
		return nil, fmt.Errorf("firmware: %w", fieldErr("version", "%s publishes %s, not %s", dir, m.Firmware.Version, version))
	}
	if want := fwsign.EncodePublic(key.Public().(ed25519.PublicKey)); m.Firmware.SigningKey != want {
		return nil, fmt.Errorf("firmware: %w", fieldErr("signing_key", "release %s is signed by %q, not by this key (%s): sign the release and its downgrade permission with the same key", version, m.Firmware.SigningKey, want))
	}
	SignDowngrade(key, &m.Firmware)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	if err := writeFile(path, append(out, '\n'), 0o644); err != nil {
		return nil, err
	}
	return &m, nil
}
