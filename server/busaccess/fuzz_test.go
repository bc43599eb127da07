package busaccess_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/busaccess"
)

// FuzzEnrolmentsFile: whatever enrolled.json holds, the authority either
// refuses to start or holds only valid enrolments; null, empty and
// truncated files are refused.
func FuzzEnrolmentsFile(f *testing.F) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		f.Fatal(err)
	}
	key, _ := kp.PublicKey()
	good := []byte(`[{"node_id": "n1", "key": "` + key + `", "enrolled_at": "2026-01-01T00:00:00Z"}]`)
	if a, err := loadEnrolments(f.TempDir(), good); err != nil || !a.Enrolled("n1", key) {
		f.Fatalf("a good enrolled.json: %v", err)
	}
	f.Add(good)
	f.Add([]byte("null"))
	f.Add([]byte(""))
	f.Add([]byte("[]"))
	for _, n := range []int{1, len(good) / 2, len(good) - 1} {
		f.Add(good[:n])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := loadEnrolments(t.TempDir(), data)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			if err == nil {
				t.Fatalf("enrolled.json %q accepted", data)
			}
			return
		}
		if err != nil {
			return
		}
		for _, e := range a.Enrolments() {
			if !msg.ValidNodeID(e.NodeID) || !nkeys.IsValidPublicUserKey(e.Key) || !a.Enrolled(e.NodeID, e.Key) {
				t.Fatalf("enrolled.json %q gave enrolment %+v", data, e)
			}
		}
	})
}

// loadEnrolments starts an authority in dir whose enrolled.json holds data.
func loadEnrolments(dir string, data []byte) (*busaccess.Authority, error) {
	if err := os.WriteFile(filepath.Join(dir, "enrolled.json"), data, 0o600); err != nil {
		return nil, err
	}
	return busaccess.New(busaccess.Options{Dir: dir})
}
