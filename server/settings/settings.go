package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/persist"
)

// FileName is the settings file inside the data directory.
const FileName = "settings.json"

// Settings is everything on the web UI's Settings page that the server
// stores. JSON names are the API's.
type Settings struct {
	System   System   `json:"system"`
	LiveLink LiveLink `json:"livelink"`
	Auth     Auth     `json:"auth"`
}

// System is the Settings page's SYSTEM box.
type System struct {
	ServerName string `json:"server_name"`
	Hostname   string `json:"hostname"`
}

// LiveLink is the LIVELINK box.
type LiveLink struct {
	Enabled bool `json:"enabled"`
	// External lets the receiver listen on the network (the server's
	// LiveLink host, 0.0.0.0 on a robot). Off, the default, it listens on
	// 127.0.0.1 only: LiveLink senders cannot authenticate, so a fresh
	// install takes nothing from the network.
	External      bool   `json:"external"`
	DiscoveryPort int    `json:"discovery_port"`
	DataPort      int    `json:"data_port"`
	BroadcastName string `json:"broadcast_name"`
}

// Auth is the AUTHENTICATION box; the token itself lives in package auth.
type Auth struct {
	Required bool `json:"required"`
}

// Defaults are the standard ports and authentication on.
func Defaults() Settings {
	return Settings{
		System:   System{ServerName: "SAINT-01", Hostname: "saint-server"},
		LiveLink: LiveLink{Enabled: true, DiscoveryPort: 54321, DataPort: 54322, BroadcastName: "SAINT-01"},
		Auth:     Auth{Required: true},
	}
}

// FieldError is a validation failure naming the setting at fault by its
// dotted JSON path ("livelink.data_port", "rc.channels[2].min").
// It is the project's field error, which the WebSocket gateway reports
// with its field.
type FieldError = fielderr.Error

func fieldErr(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

// ValidHostname reports whether h is an RFC 1123 host name.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// Validate checks every field, returning a *FieldError for the first
// problem.
func (s Settings) Validate() error {
	if n := strings.TrimSpace(s.System.ServerName); n == "" || len(n) > 64 {
		return fieldErr("system.server_name", "want 1 to 64 characters, got %q", s.System.ServerName)
	}
	if !validHostname(s.System.Hostname) {
		return fieldErr("system.hostname", "%q is not a host name (letters, digits, '-', dot-separated labels)", s.System.Hostname)
	}
	port := func(field string, p int) error {
		if p < 1 || p > 65535 {
			return fieldErr(field, "want a port 1 to 65535, got %d", p)
		}
		return nil
	}
	if err := port("livelink.discovery_port", s.LiveLink.DiscoveryPort); err != nil {
		return err
	}
	if err := port("livelink.data_port", s.LiveLink.DataPort); err != nil {
		return err
	}
	if n := strings.TrimSpace(s.LiveLink.BroadcastName); n == "" || len(n) > 64 {
		return fieldErr("livelink.broadcast_name", "want 1 to 64 characters, got %q", s.LiveLink.BroadcastName)
	}
	return nil
}

// Store holds the settings and writes every change to disk. It is safe for
// concurrent use.
type Store struct {
	path string
	// check vets a change before it is stored (the server refuses to turn
	// authentication off while it listens beyond loopback).
	check func(old, new Settings) error

	// Recovered, when not empty, says that the settings file was damaged,
	// where it was moved and what to do.
	Recovered string

	mu       sync.Mutex
	cur      Settings
	watchers []func(Settings)
}

// Open reads dir/settings.json, or starts from Defaults if there is none.
// A file that does not parse or validate is not silently reset: it is
// moved aside (settings.json.corrupt-<time>), the store starts from
// Defaults, and Recovered says what happened, for the server to log as an
// error with what to do.
func Open(dir string) (*Store, error) {
	return OpenAt(dir, time.Now())
}

// OpenAt is Open with the time that names a damaged file moved aside.
func OpenAt(dir string, now time.Time) (*Store, error) {
	s := &Store{cur: Defaults()}
	if dir == "" {
		return s, nil // in memory only
	}
	s.path = filepath.Join(dir, FileName)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	// Empty and null are damage like a torn write: a file of defaults is
	// written "{...}", never "null".
	var probe map[string]json.RawMessage
	err = persist.DecodeJSON(data, &probe)
	cur := Defaults()
	if err == nil {
		cur, err = merge(Defaults(), withoutLegacy(data))
	}
	if err == nil {
		err = cur.Validate()
	}
	if err != nil {
		moved, mvErr := persist.MoveAside(s.path, now)
		if mvErr != nil {
			return nil, fmt.Errorf("settings: %s: %w (and it could not be moved aside: %v)", s.path, err, mvErr)
		}
		s.Recovered = fmt.Sprintf("%s is damaged (%v): moved to %s and started from the defaults; "+
			"set the settings again in the admin page, or repair that file and put it back while the server is stopped", s.path, err, moved)
		return s, nil
	}
	s.cur = cur
	return s, nil
}

// legacySections are sections earlier versions stored here and that now
// live with their owners: the RC receiver's configuration is
// rc_receiver.yaml, which those versions kept up to date too.
var legacySections = []string{"rc"}

// withoutLegacy drops the legacy sections from a settings file, so that
// a file an earlier version wrote still opens.
func withoutLegacy(data []byte) []byte {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil {
		return data // merge reports what is wrong with it
	}
	found := false
	for _, k := range legacySections {
		if _, ok := doc[k]; ok {
			delete(doc, k)
			found = true
		}
	}
	if !found {
		return data
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return data
	}
	return out
}

// SetCheck installs a veto run on every change before it is stored.
func (s *Store) SetCheck(check func(old, new Settings) error) {
	s.mu.Lock()
	s.check = check
	s.mu.Unlock()
}

// Get returns a copy of the current settings.
func (s *Store) Get() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.cur)
}

// Watch calls f with the new settings after every stored change. f runs
// on the changing goroutine and must not call Update.
func (s *Store) Watch(f func(Settings)) {
	s.mu.Lock()
	s.watchers = append(s.watchers, f)
	s.mu.Unlock()
}

// Patch merges a partial JSON document onto the current settings,
// validates the result and stores it. Unknown fields are errors naming
// the field.
func (s *Store) Patch(patch []byte) (Settings, error) {
	return s.Update(func(cur Settings) (Settings, error) { return merge(cur, patch) })
}

// Update applies change to a copy of the current settings, validates and
// stores the result; on any error nothing changes.
func (s *Store) Update(change func(Settings) (Settings, error)) (Settings, error) {
	s.mu.Lock()
	next, err := change(clone(s.cur))
	if err == nil {
		err = next.Validate()
	}
	if err == nil && s.check != nil {
		err = s.check(s.cur, next)
	}
	if err == nil && s.path != "" {
		data, _ := json.MarshalIndent(next, "", "  ")
		if err = os.MkdirAll(filepath.Dir(s.path), 0o700); err == nil {
			err = persist.WriteFile(s.path, append(data, '\n'), 0o600)
		}
	}
	if err != nil {
		s.mu.Unlock()
		return Settings{}, err
	}
	s.cur = next
	watchers := append([]func(Settings){}, s.watchers...)
	s.mu.Unlock()
	for _, w := range watchers {
		w(clone(next))
	}
	return clone(next), nil
}

// merge decodes patch onto a copy of cur: objects merge field by field,
// lists replace, unknown fields are rejected by name.
func merge(cur Settings, patch []byte) (Settings, error) {
	next := clone(cur)
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&next); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return Settings{}, fieldErr("settings", "want a JSON object, got %s", te.Value)
			}
			return Settings{}, fieldErr(te.Field, "want %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
			name := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
			if name == "" {
				return Settings{}, fieldErr("settings", `unknown setting ""`)
			}
			return Settings{}, fieldErr(name, "unknown setting")
		}
		return Settings{}, fieldErr("settings", "not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Settings{}, fieldErr("settings", "want one JSON object, found more after it")
	}
	return next, nil
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "struct":
		return "an object"
	}
	return k
}

func clone(s Settings) Settings { return s }
