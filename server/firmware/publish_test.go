package firmware

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/saint-os/saint/roleconfig"
)

// readManifest decodes dir/manifest.json strictly: a field docs/firmware.md
// does not list fails the test.
func readManifest(t *testing.T, dir string) Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var top []string
	for k := range raw {
		top = append(top, k)
	}
	sort.Strings(top)
	if want := []string{"configs", "firmware", "supported_roles"}; !reflect.DeepEqual(top, want) {
		t.Errorf("manifest.json keys %v, want %v", top, want)
	}
	var fw map[string]any
	if err := json.Unmarshal(raw["firmware"], &fw); err != nil {
		t.Fatal(err)
	}
	var fwKeys []string
	for k := range fw {
		fwKeys = append(fwKeys, k)
	}
	sort.Strings(fwKeys)
	if want := []string{"changelog", "checksum_sha256", "min_hardware_rev", "release_date", "size_bytes", "version"}; !reflect.DeepEqual(fwKeys, want) {
		t.Errorf("manifest.json firmware keys %v, want %v", fwKeys, want)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func TestManifestMatchesTheFiles(t *testing.T) {
	image := []byte("\x7fELF pretend node image")
	dir := t.TempDir()
	if _, err := Publish(dir, roles, image, Release{Version: "1.2.0", ReleaseDate: "2026-01-15", MinHardwareRev: "1.0", Changelog: "Smooth motion"}); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, dir)
	fw := m.Firmware
	if fw.Version != "1.2.0" || fw.ReleaseDate != "2026-01-15" || fw.MinHardwareRev != "1.0" || fw.Changelog != "Smooth motion" {
		t.Errorf("firmware = %+v", fw)
	}
	img, err := os.ReadFile(filepath.Join(dir, ImagePath))
	if err != nil {
		t.Fatal(err)
	}
	if fw.ChecksumSHA256 != sum(img) || fw.SizeBytes != int64(len(img)) || string(img) != string(image) {
		t.Errorf("manifest says sha256 %s size %d; current image has %s, %d bytes", fw.ChecksumSHA256, fw.SizeBytes, sum(img), len(img))
	}
	side, err := os.ReadFile(filepath.Join(dir, ChecksumPath))
	if err != nil || string(side) != sum(image)+"  saint_node.img\n" {
		t.Errorf("%s = %q (%v), want sha256sum format", ChecksumPath, side, err)
	}
	log, err := os.ReadFile(filepath.Join(dir, ChangelogPath))
	if err != nil || !strings.Contains(string(log), "## 1.2.0 (2026-01-15)\n\nSmooth motion\n") {
		t.Errorf("changelog = %q (%v)", log, err)
	}
	// Every role configuration in configs/ is listed with its checksum
	// and version, and supported_roles names exactly them.
	entries, err := os.ReadDir(filepath.Join(dir, ConfigsDir))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		key := strings.TrimSuffix(e.Name(), ".yaml")
		keys = append(keys, key)
		data, err := os.ReadFile(filepath.Join(dir, ConfigsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := roleconfig.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Configs[key]; got.Checksum != roleconfig.Checksum(data) || got.Version != cfg.Version || got.Version == "" {
			t.Errorf("configs[%s] = %+v, file has version %q checksum %s", key, got, cfg.Version, roleconfig.Checksum(data))
		}
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, m.SupportedRoles) || len(keys) < 5 {
		t.Errorf("supported_roles %v, configs/ holds %v", m.SupportedRoles, keys)
	}
}

func TestPublishArchivesThePreviousVersion(t *testing.T) {
	dir := t.TempDir()
	rel := func(v, log string) Release {
		return Release{Version: v, ReleaseDate: "2026-02-01", MinHardwareRev: "1.0", Changelog: log}
	}
	if _, err := Publish(dir, roles, []byte("image one"), rel("1.0.0", "first")); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(filepath.Join(dir, ArchiveDir)); err != nil || len(entries) != 0 {
		t.Errorf("archive/ after the first publish: %v (%v); want it empty: it holds only older versions", entries, err)
	}
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Publish([]byte("image two"), rel("1.1.0", "second")); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); !st.Available || st.Firmware.Version != "1.1.0" || st.Firmware.SizeBytes != 9 {
		t.Errorf("after publishing 1.1.0 the repository offers %+v", st.Firmware)
	}
	old, err := os.ReadFile(filepath.Join(dir, "archive", "v1.0.0", "saint_node.img"))
	if err != nil || string(old) != "image one" {
		t.Errorf("archive/v1.0.0/saint_node.img = %q (%v)", old, err)
	}
	oldSum, _ := os.ReadFile(filepath.Join(dir, "archive", "v1.0.0", "saint_node.img.sha256"))
	if !strings.HasPrefix(string(oldSum), sum([]byte("image one"))) {
		t.Errorf("archived .sha256 = %q", oldSum)
	}
	archived := readManifest(t, filepath.Join(dir, "archive", "v1.0.0"))
	if archived.Firmware.Version != "1.0.0" || archived.Firmware.ChecksumSHA256 != sum([]byte("image one")) {
		t.Errorf("archived manifest %+v", archived.Firmware)
	}
	cur, _ := os.ReadFile(filepath.Join(dir, ImagePath))
	if string(cur) != "image two" {
		t.Errorf("current image %q", cur)
	}
	log, _ := os.ReadFile(filepath.Join(dir, ChangelogPath))
	if i, j := strings.Index(string(log), "## 1.1.0"), strings.Index(string(log), "## 1.0.0"); i < 0 || j < i {
		t.Errorf("changelog does not list 1.1.0 above 1.0.0:\n%s", log)
	}
	// Older or equal versions are refused by the repository, naming the field.
	_, err = r.Publish([]byte("image zero"), rel("1.0.5", "older"))
	var fe *FieldError
	if !asFieldError(err, &fe) || fe.Field != "version" {
		t.Errorf("publishing an older version: %v, want a version field error", err)
	}
	if st := r.Status(); st.Firmware.Version != "1.1.0" {
		t.Errorf("refused publish changed the current version to %s", st.Firmware.Version)
	}
}

func TestReleaseValidateNamesTheField(t *testing.T) {
	ok := Release{Version: "1.2.0", ReleaseDate: "2026-01-15", MinHardwareRev: "1.0"}
	for _, tc := range []struct {
		edit  func(*Release)
		field string
	}{
		{func(r *Release) { r.Version = "" }, "version"},
		{func(r *Release) { r.Version = "../../etc" }, "version"},
		{func(r *Release) { r.Version = "1.2.0/x" }, "version"},
		{func(r *Release) { r.ReleaseDate = "15.01.2026" }, "release_date"},
		{func(r *Release) { r.MinHardwareRev = "rev A" }, "min_hardware_rev"},
	} {
		rel := ok
		tc.edit(&rel)
		err := rel.Validate()
		var fe *FieldError
		if !asFieldError(err, &fe) || fe.Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want a %s error", rel, err, tc.field)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid release refused: %v", err)
	}
}
