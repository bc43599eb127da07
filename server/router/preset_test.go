package router

import (
	"io/fs"
	"testing"

	"github.com/saint-os/saint/fixtures"
)

// The spec's five presets ship, parse and validate.
func TestShippedPresets(t *testing.T) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := seedPresets(sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "facecap_head", "ue_fullbody", "rc_manual", "manual_override"} {
		data, ok := seeds[name]
		if !ok {
			t.Errorf("preset %s missing", name)
			continue
		}
		cfg, err := ParseConfig(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(cfg.Routes) == 0 || cfg.Blending == nil {
			t.Errorf("%s: %d routes, blending %v", name, len(cfg.Routes), cfg.Blending)
		}
	}
}
