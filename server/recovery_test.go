package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/inputs/livelink"
)

// A server whose adopted.json, settings.json and LiveLink allow-list were
// truncated (a power cut on a file system without the atomic writes, a
// full disk), emptied or set to null (a bug, a hand edit) still starts:
// each is moved aside and kept, each is an error in the activity log, the
// settings are the defaults, no node is taken from the registry and no
// LiveLink sender is admitted.
func TestServerStartsWithDamagedStateFiles(t *testing.T) {
	for _, damage := range []struct{ name, registry, settings, senders string }{
		{"truncated", `[{"node_id":"n1","role":"hea`, `{"system":{"server_name":`, `{"allowed":[{"address":"10.0`},
		{"null", "null", "null", "null"},
		{"empty", "", "\n", " "},
	} {
		t.Run(damage.name, func(t *testing.T) {
			data := t.TempDir()
			files := map[string]string{"adopted.json": damage.registry, "settings.json": damage.settings, livelink.SendersFile: damage.senders}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			srv, err := server.New(server.Options{Bus: mem.NewBroker().Connect(nil), ConfigDir: configDir, DataDir: data, NoAuth: true})
			if err != nil {
				t.Fatalf("damaged state files stopped the server: %v", err)
			}
			for name, body := range files {
				kept, _ := filepath.Glob(filepath.Join(data, name+".corrupt-*"))
				if len(kept) != 1 {
					t.Errorf("%s: kept copies %v, want one", name, kept)
					continue
				}
				if b, _ := os.ReadFile(kept[0]); string(b) != body {
					t.Errorf("%s: the copy holds %q, want %q", name, b, body)
				}
			}
			events, _ := srv.Activity().Query(activity.Filter{Level: "ERROR"})
			var errs []string
			for _, e := range events {
				errs = append(errs, e.Message)
			}
			for _, want := range []string{"adopted.json", "settings.json", "LiveLink allow-list"} {
				if !slices.ContainsFunc(errs, func(m string) bool { return strings.Contains(m, want) }) {
					t.Errorf("no error in the activity log names %s: %q", want, errs)
				}
			}
			if n := len(srv.Adoption().Adopted()); n != 0 {
				t.Errorf("%d adopted nodes from a damaged registry", n)
			}
		})
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
