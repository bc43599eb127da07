package roleconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// A role configuration from anywhere (a server, an edited file) never
// panics the parser, its checks, or the decoding of a role's settings.
//
// The seeds are the shipped configurations cut into their top-level
// sections, each with the file's role and version: the same keys and
// values, in inputs of a few hundred bytes. Whole files (3–5 KB) as seeds
// made `go test -fuzz` look hung: the engine minimizes every new
// interesting input, and minimizing a mutated 5 KB file at about a
// millisecond an execution took up to -fuzzminimizetime (60 s) each,
// showing no executions meanwhile.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../fixtures/config/roles/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			for _, s := range sections(string(b)) {
				f.Add([]byte(s))
			}
		}
	}
	f.Add([]byte("role: tracks\nversion: \"1\"\nlink_timeout_ms: -1\n"))
	f.Add([]byte("role: head\nversion: 1\ngpio_mapping: {a: {pin: 99}}\n"))
	f.Add([]byte("&a [*a, *a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := roleconfig.Parse(data)
		if err != nil {
			return
		}
		_ = cfg.Validate()
		var params struct {
			LinkTimeoutMS float64 `yaml:"link_timeout_ms"`
		}
		if cfg.Decode("", &params) == nil {
			_, _ = rolekit.LinkTimeout(cfg, params.LinkTimeoutMS)
		}
		for _, field := range []string{"limits", "gpio_mapping", "i2c_devices[0].address", "motor.kp[1]"} {
			_ = cfg.Line(field)
			var any map[string]any
			_ = cfg.Decode(field, &any)
		}
	})
}

// sections cuts a configuration file into documents of one top-level
// key each, after the file's role, instance and version lines.
func sections(file string) []string {
	var head []string
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(append(append([]string{}, head...), cur...), "\n")+"\n")
		}
		cur = nil
	}
	for _, line := range strings.Split(file, "\n") {
		switch {
		case strings.HasPrefix(line, "role:"), strings.HasPrefix(line, "instance:"), strings.HasPrefix(line, "version:"):
			head = append(head, line)
		case line == "" || strings.HasPrefix(line, "#"):
		case line[0] != ' ' && line[0] != '-':
			flush()
			cur = []string{line}
		default:
			cur = append(cur, line)
		}
	}
	flush()
	return out
}
