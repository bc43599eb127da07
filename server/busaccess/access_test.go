package busaccess_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/server/busaccess"
)

// A damaged grants file does not stop the server: it is moved aside
// (named by the wall clock Options.Now gives) and nothing is granted.
func TestDamagedGrantsMovedAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nodes.json"), []byte(`[{"node_id": "head-1",`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	a, err := busaccess.New(busaccess.Options{Dir: dir, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatalf("New with a damaged grants file: %v", err)
	}
	if g, ok := a.Granted("head-1"); ok {
		t.Errorf("grant %+v from a damaged file", g)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodes.json.corrupt-20260304T050607.000Z")); err != nil {
		t.Errorf("the damaged file was not kept aside: %v", err)
	}
}
