package roleconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// A role configuration from anywhere (a server, an edited file) never
// panics the parser, its checks, or the decoding of a role's settings.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../fixtures/config/roles/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
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
	})
}
