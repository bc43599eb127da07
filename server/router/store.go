package router

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/persist"
)

// DefaultPreset is the preset the routes start from on a fresh data
// directory.
const DefaultPreset = "default"

// store keeps the active configuration and the presets: in
// DataDir/routes/active.yaml and DataDir/routes/presets/NAME.yaml, written
// atomically, or in memory when there is no data directory. Its methods
// do file I/O and run off the executor, one at a time (Router.saveMu).
type store struct {
	dir string            // DataDir/routes; "" in memory
	mem map[string][]byte // presets, when dir is ""
}

var presetName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func checkPresetName(name string) error {
	if name == "" {
		return fieldErr("preset_name", "required")
	}
	if !presetName.MatchString(name) {
		return fieldErr("preset_name", "want 1-64 letters, digits, '_' or '-', got %q", name)
	}
	return nil
}

// ConfigPresets returns the presets of a configuration tree
// (configDir/routes/*.yaml) for Options.Presets, or nil, which means the
// embedded ones, when the tree has none. It reads the disk: call it at
// start-up, not on the executor.
func ConfigPresets(configDir string) fs.FS {
	if configDir == "" {
		return nil
	}
	dir := filepath.Join(configDir, "routes")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return os.DirFS(dir)
}

// seedPresets returns the shipped presets: name → file contents.
func seedPresets(src fs.FS) (map[string][]byte, error) {
	if src == nil {
		sub, err := fs.Sub(fixtures.Config(), "routes")
		if err != nil {
			return nil, err
		}
		src = sub
	}
	entries, err := fs.ReadDir(src, ".")
	if err != nil {
		return nil, fmt.Errorf("router: presets: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := fs.ReadFile(src, e.Name())
		if err != nil {
			return nil, fmt.Errorf("router: preset %s: %w", e.Name(), err)
		}
		if _, err := ParseConfig(data); err != nil {
			return nil, fmt.Errorf("router: preset %s: %w", e.Name(), err)
		}
		out[strings.TrimSuffix(e.Name(), ".yaml")] = data
	}
	return out, nil
}

func openStore(dataDir string, src fs.FS) (*store, *Config, error) {
	seeds, err := seedPresets(src)
	if err != nil {
		return nil, nil, err
	}
	if dataDir == "" {
		s := &store{mem: seeds}
		cfg, err := s.loadPreset(DefaultPreset)
		if errors.Is(err, fs.ErrNotExist) {
			return s, &Config{}, nil
		}
		return s, cfg, err
	}
	s := &store{dir: filepath.Join(dataDir, "routes")}
	presets := filepath.Join(s.dir, "presets")
	if _, err := os.Stat(presets); errors.Is(err, fs.ErrNotExist) {
		// First start: ship the presets. Later, the directory is the
		// user's (a deleted preset stays deleted).
		names := make([]string, 0, len(seeds))
		for n := range seeds {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := persist.WriteFile(filepath.Join(presets, n+".yaml"), seeds[n], 0o600); err != nil {
				return nil, nil, fmt.Errorf("router: seeding presets: %w", err)
			}
		}
	} else if err != nil {
		return nil, nil, fmt.Errorf("router: %w", err)
	}
	active := s.activePath()
	data, err := os.ReadFile(active)
	switch {
	case err == nil:
		// null and empty are damage like a torn write (a configuration
		// without routes is written as a mapping): the robot must not start
		// with its routes gone unnoticed.
		var whole map[string]any
		if err := persist.DecodeYAML(data, &whole); err != nil {
			return nil, nil, fmt.Errorf("router: %s is not a valid routing configuration (fix or remove it): %w", active, err)
		}
		cfg, err := ParseConfig(data)
		if err != nil {
			return nil, nil, fmt.Errorf("router: %s is not a valid routing configuration (fix or remove it): %w", active, err)
		}
		return s, cfg, nil
	case errors.Is(err, fs.ErrNotExist):
		cfg, err := s.loadPreset(DefaultPreset)
		if errors.Is(err, fs.ErrNotExist) {
			cfg, err = &Config{}, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if err := s.saveActive(cfg); err != nil {
			return nil, nil, err
		}
		return s, cfg, nil
	default:
		return nil, nil, fmt.Errorf("router: %w", err)
	}
}

func (s *store) activePath() string { return filepath.Join(s.dir, "active.yaml") }

func (s *store) presetPath(name string) string {
	return filepath.Join(s.dir, "presets", name+".yaml")
}

// saveActive writes the active configuration.
func (s *store) saveActive(cfg *Config) error {
	if s.dir == "" {
		return nil
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	if err := persist.WriteFile(s.activePath(), data, 0o600); err != nil {
		return fmt.Errorf("router: saving routes: %w", err)
	}
	return nil
}

// PresetInfo describes one preset in list_presets.
type PresetInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Routes      int    `json:"routes"`
	// Error is set when the preset's file cannot be read or parsed.
	Error string `json:"error,omitempty"`
}

func (s *store) presetNames() ([]string, error) {
	var names []string
	if s.dir == "" {
		for n := range s.mem {
			names = append(names, n)
		}
	} else {
		entries, err := os.ReadDir(filepath.Join(s.dir, "presets"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("router: presets: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *store) listPresets() ([]PresetInfo, error) {
	names, err := s.presetNames()
	if err != nil {
		return nil, err
	}
	out := make([]PresetInfo, 0, len(names))
	for _, n := range names {
		info := PresetInfo{Name: n}
		cfg, err := s.loadPreset(n)
		if err != nil {
			info.Error = err.Error()
		} else {
			info.Description, info.Routes = cfg.Description, len(cfg.Routes)
		}
		out = append(out, info)
	}
	return out, nil
}

// loadPreset reads and validates a preset; a missing one is an error
// wrapping fs.ErrNotExist.
func (s *store) loadPreset(name string) (*Config, error) {
	if err := checkPresetName(name); err != nil {
		return nil, err
	}
	var data []byte
	where := "preset " + name
	if s.dir == "" {
		var ok bool
		data, ok = s.mem[name]
		if !ok {
			return nil, fmt.Errorf("router: no preset %q: %w", name, fs.ErrNotExist)
		}
	} else {
		where = s.presetPath(name)
		var err error
		data, err = os.ReadFile(where)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("router: no preset %q: %w", name, fs.ErrNotExist)
		}
		if err != nil {
			return nil, fmt.Errorf("router: %w", err)
		}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("router: %s is not a valid routing configuration: %w", where, err)
	}
	return cfg, nil
}

func (s *store) savePreset(name string, cfg *Config) error {
	if err := checkPresetName(name); err != nil {
		return err
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	if s.dir == "" {
		s.mem[name] = data
		return nil
	}
	if err := persist.WriteFile(s.presetPath(name), data, 0o600); err != nil {
		return fmt.Errorf("router: saving preset %s: %w", name, err)
	}
	return nil
}

func (s *store) deletePreset(name string) error {
	if err := checkPresetName(name); err != nil {
		return err
	}
	if s.dir == "" {
		if _, ok := s.mem[name]; !ok {
			return fmt.Errorf("router: no preset %q: %w", name, fs.ErrNotExist)
		}
		delete(s.mem, name)
		return nil
	}
	p := s.presetPath(name)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("router: no preset %q: %w", name, fs.ErrNotExist)
	}
	return persist.Remove(p)
}
