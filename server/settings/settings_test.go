package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/persist"
)

func TestDefaultsValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	if d.LiveLink.DiscoveryPort != 54321 || d.LiveLink.DataPort != 54322 || !d.Auth.Required {
		t.Errorf("defaults %+v: want LiveLink on 54321/54322 and auth on", d)
	}
}

func TestPatchPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Patch([]byte(`{"system":{"server_name":"SAINT-07"},"livelink":{"data_port":6000},"livelink":{"broadcast_name":"STAGE"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.System.ServerName != "SAINT-07" || got.System.Hostname != "saint-server" || got.LiveLink.DataPort != 6000 ||
		got.LiveLink.DiscoveryPort != 54321 || got.LiveLink.BroadcastName != "STAGE" {
		t.Fatalf("patched %+v: want only the patched fields changed", got)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g := again.Get(); g.System.ServerName != "SAINT-07" || g.LiveLink.DataPort != 6000 || g.LiveLink.BroadcastName != "STAGE" {
		t.Errorf("reopened %+v: change not persisted", g)
	}
}

func TestPatchErrorsNameTheField(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, tc := range []struct{ patch, field string }{
		{`{"livelink":{"data_port":70000}}`, "livelink.data_port"},
		{`{"livelink":{"data_port":"x"}}`, "livelink.data_port"},
		{`{"system":{"hostname":"bad host"}}`, "system.hostname"},
		{`{"system":{"server_name":""}}`, "system.server_name"},
		{`{"livelink":{"broadcast_name":""}}`, "livelink.broadcast_name"},
		{`{"rc":{"protocol":"sbus"}}`, "rc"},
		{`{"auth":{"required":"yes"}}`, "auth.required"},
		{`{"colour":"red"}`, "colour"},
		{`[1,2]`, "settings"},
	} {
		_, err := s.Patch([]byte(tc.patch))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("Patch(%s) = %v; want an error naming %s", tc.patch, err, tc.field)
		}
	}
	if g := s.Get(); g.LiveLink.DataPort != 54322 || g.LiveLink.BroadcastName != "SAINT-01" {
		t.Errorf("failed patches changed the settings: %+v", g)
	}
}

func TestCheckVetoesAndWatchSeesChanges(t *testing.T) {
	s, _ := Open(t.TempDir())
	var seen []Settings
	s.Watch(func(n Settings) { seen = append(seen, n) })
	s.SetCheck(func(old, n Settings) error {
		if !n.Auth.Required {
			return &FieldError{Field: "auth.required", Message: "refused"}
		}
		return nil
	})
	if _, err := s.Patch([]byte(`{"auth":{"required":false}}`)); err == nil {
		t.Fatal("veto ignored")
	}
	if _, err := s.Patch([]byte(`{"livelink":{"enabled":false}}`)); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].LiveLink.Enabled {
		t.Errorf("watchers saw %+v, want one change with livelink disabled", seen)
	}
}

// A truncated settings file is not taken, nor silently reset: it is moved
// aside, kept for repair, and the store starts from the defaults saying
// so.
func TestOpenMovesACorruptFileAside(t *testing.T) {
	dir := t.TempDir()
	bad := []byte(`{"livelink":{"data_port":0}`)
	if err := os.WriteFile(filepath.Join(dir, FileName), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenAt(dir, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, FileName+".corrupt-20261124T120000.000Z")
	if got, err := os.ReadFile(moved); err != nil || !bytes.Equal(got, bad) {
		t.Fatalf("the damaged file was not kept at %s: %q, %v", moved, got, err)
	}
	if !strings.Contains(s.Recovered, moved) || !strings.Contains(s.Recovered, "damaged") {
		t.Errorf("Recovered = %q, want it to say the file was damaged and where it went", s.Recovered)
	}
	if !reflect.DeepEqual(s.Get(), Defaults()) {
		t.Errorf("settings %+v, want the defaults", s.Get())
	}
	again, err := Open(dir)
	if err != nil || again.Recovered != "" {
		t.Errorf("opening again: %v, recovered %q", err, again.Recovered)
	}
}

// TestOpenSkipsLegacyRC: a settings file from a version that kept the RC
// receiver's configuration here as well still opens; the receiver's own
// rc_receiver.yaml is its configuration.
func TestOpenSkipsLegacyRC(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"system":{"server_name":"SAINT-09","hostname":"saint-server"},"rc":{"enabled":true,"protocol":"sbus"}}`
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Get(); g.System.ServerName != "SAINT-09" || g.LiveLink.DataPort != 54322 {
		t.Errorf("opened %+v, want the file's name over the defaults", g)
	}
}

// FuzzPatch: whatever a client sends, Patch never panics, and either
// stores settings that validate or refuses with an error naming a field,
// leaving the settings as they were.
func FuzzPatch(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"system":{"server_name":"X"}}`, `{"livelink":{"enabled":false,"broadcast_name":"Y"}}`,
		`{"livelink":{"data_port":-1}}`, `[]`, `null`, `{"rc":{"gpio":{"pwm_pins":[99]}}}`, `{"auth":{"required":false}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		s, _ := Open("")
		before := s.Get()
		got, err := s.Patch(patch)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("Patch(%q) = %v: want a *FieldError naming a field", patch, err)
			}
			if fmt.Sprint(s.Get()) != fmt.Sprint(before) {
				t.Fatalf("Patch(%q) failed but changed the settings", patch)
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("Patch(%q) stored invalid settings: %v", patch, err)
		}
	})
}

// FuzzSettingsFile: whatever settings.json holds (a power cut, a hand
// edit), opening it never panics and never fails: settings that validate
// are taken, anything else is moved aside and the defaults start; and what
// is taken reads back the same after it is written.
func FuzzSettingsFile(f *testing.F) {
	for _, seed := range []string{
		`{"system":{"server_name":"SAINT-09","hostname":"saint"},"livelink":{"enabled":true,"external":true,"data_port":6000}}`,
		`{"rc":{"enabled":true},"auth":{"required":false}}`, `{"livelink":{"data_port":70000}}`, `{"system":`, `[]`, ``,
		`null`, " null\n", "\n", `{"system":{"server_name":"SAINT-09"}`, `{"system":{"server_na`, `{`,
	} {
		f.Add([]byte(seed))
	}
	at := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenAt(dir, at)
		if err != nil {
			t.Fatalf("OpenAt: %v", err)
		}
		got := s.Get()
		if err := got.Validate(); err != nil {
			t.Fatalf("opened settings that do not validate: %v", err)
		}
		var doc map[string]json.RawMessage
		if persist.DecodeJSON(data, &doc) != nil && s.Recovered == "" {
			t.Fatalf("settings file %q (null, empty, truncated or garbled) opened as if it were whole", data)
		}
		if s.Recovered != "" {
			if !reflect.DeepEqual(got, Defaults()) {
				t.Fatalf("a damaged file started from %+v, not the defaults", got)
			}
			if _, err := os.Stat(filepath.Join(dir, FileName+".corrupt-20261125T010000.000Z")); err != nil {
				t.Fatalf("damaged file not moved aside: %v", err)
			}
			return
		}
		if _, err := s.Patch([]byte(`{}`)); err != nil { // writes the file
			t.Fatal(err)
		}
		again, err := OpenAt(dir, at)
		if err != nil || again.Recovered != "" || !reflect.DeepEqual(again.Get(), got) {
			t.Fatalf("settings %+v read back as %+v (%v, %q)", got, again.Get(), err, again.Recovered)
		}
	})
}
