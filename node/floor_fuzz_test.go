package node_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/node"
)

// FuzzFirmwareFloorFile: whatever firmware_floor.yaml holds, the store
// reads a floor with a version or reports the file damaged (null, empty and
// truncated files among them), and once a damaged file is moved aside a new
// floor is written and read back.
func FuzzFirmwareFloorFile(f *testing.F) {
	good := []byte("version: 0.3.0\nraised_at: \"2026-11-29T00:00:00Z\"\n")
	f.Add(good)
	f.Add([]byte("null"))
	f.Add([]byte(""))
	f.Add([]byte("version: \n"))
	for _, n := range []int{1, 9, len(good) / 2, len(good) - 2} {
		f.Add(good[:n])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "firmware_floor.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := node.NewStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		floor, ok, err := s.FirmwareFloor()
		trimmed := bytes.TrimSpace(data)
		if (len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))) && (ok || err == nil) {
			t.Fatalf("floor file %q read as %+v (ok %v, err %v), want damaged", data, floor, ok, err)
		}
		if ok && floor.Version == "" {
			t.Fatalf("floor file %q read with an empty version", data)
		}
		if err != nil {
			if _, merr := s.MoveFirmwareFloorAside(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)); merr != nil {
				t.Fatal(merr)
			}
		}
		raised, err := s.RaiseFirmwareFloor("0.4.0", "2026-11-29T00:00:00Z", fwsign.CompareVersions)
		if err != nil {
			t.Fatal(err)
		}
		again, ok, err := s.FirmwareFloor()
		if err != nil || !ok || again != raised || fwsign.CompareVersions(again.Version, "0.4.0") < 0 {
			t.Fatalf("after raising to 0.4.0: %+v (%v, %v), raised %+v", again, ok, err, raised)
		}
	})
}
