package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
)

// A server whose adopted.json and settings.json were truncated (a power
// cut on a file system without the atomic writes, a full disk) still
// starts: both are moved aside and kept, the errors are in the activity
// log, and the settings are the defaults.
func TestServerStartsWithDamagedStateFiles(t *testing.T) {
	data := t.TempDir()
	for name, body := range map[string]string{
		"adopted.json":  `[{"node_id":"n1","role":"hea`,
		"settings.json": `{"system":{"server_name":`,
	} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(server.Options{Bus: mem.NewBroker().Connect(nil), ConfigDir: configDir, DataDir: data, NoAuth: true})
	if err != nil {
		t.Fatalf("damaged state files stopped the server: %v", err)
	}
	for _, name := range []string{"adopted.json", "settings.json"} {
		if kept, _ := filepath.Glob(filepath.Join(data, name+".corrupt-*")); len(kept) != 1 {
			t.Errorf("%s: kept copies %v, want one", name, kept)
		}
	}
	var errs []string
	events, _ := srv.Activity().Query(activity.Filter{Level: "ERROR", Search: "damaged"})
	for _, e := range events {
		errs = append(errs, e.Message)
	}
	if len(errs) != 2 {
		t.Errorf("activity log errors about damaged files: %q, want two", errs)
	}
}

// Everything the server keeps in its data directory is its user's only:
// directories 0700, files 0600.
func TestDataDirIsPrivate(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	srv, err := server.New(server.Options{Bus: mem.NewBroker().Connect(nil), ConfigDir: configDir, DataDir: data, NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Settings().Patch([]byte(`{"system":{"server_name":"private"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Activity().Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %v, want nothing for group and others", p, perm)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Errorf("only %d entries in the data directory: nothing was written", n)
	}
}
