package roleconfig

import (
	"errors"
	"strings"
	"testing"
)

type testGains struct {
	Kp float64 `yaml:"kp"`
	Ki float64 `yaml:"ki"`
}

type testParams struct {
	RateHz float64            `yaml:"rate_hz"`
	Mode   string             `yaml:"mode"`
	Loop   testGains          `yaml:"loop"`
	Levels map[string]float64 `yaml:"levels"`
	Pair   [2]float64         `yaml:"pair"`
}

const decodeDoc = `role: tracks
version: "1"
limits:
  max_linear: 1.5
rate_hz: 20
mode: fast
loop:
  kp: 2
  ki: 0.5
levels: {low: 1, high: 2}
pair: [1, 2]
`

func TestDecodeKeepsDefaultsAndReadsTheFile(t *testing.T) {
	c, err := ParseFile("t.yaml", []byte(strings.Replace(decodeDoc, "  ki: 0.5\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := testParams{RateHz: 10, Loop: testGains{Ki: 7}}
	if err := c.Decode("", &p); err != nil {
		t.Fatal(err)
	}
	if p.RateHz != 20 || p.Mode != "fast" || p.Loop.Kp != 2 || p.Loop.Ki != 7 || p.Levels["high"] != 2 || p.Pair != [2]float64{1, 2} {
		t.Errorf("decoded %+v", p)
	}
	var lim struct {
		MaxLinear  float64 `yaml:"max_linear"`
		MaxAngular float64 `yaml:"max_angular"`
	}
	lim.MaxAngular = 3
	if err := c.Decode("limits", &lim); err != nil || lim.MaxLinear != 1.5 || lim.MaxAngular != 3 {
		t.Errorf("limits %+v, %v", lim, err)
	}
	g := testGains{Kp: 9}
	if err := c.Decode("nothing_here", &g); err != nil || g.Kp != 9 {
		t.Errorf("a missing section changed %+v (%v)", g, err)
	}
	// An edit in code counts, not the file's text.
	c.Params["rate_hz"] = 50
	if err := c.Decode("", &p); err != nil || p.RateHz != 50 {
		t.Errorf("after the edit rate_hz = %v (%v)", p.RateHz, err)
	}
}

func TestDecodeErrorsNameFileLineAndField(t *testing.T) {
	for _, tc := range []struct {
		from, to, want string
	}{
		{"  kp: 2", "  kpp: 2", "t.yaml:8: loop.kpp: unknown field (known: ki, kp)"},
		{"mode: fast", "mood: fast", "t.yaml:6: mood: unknown field (known: levels, loop, mode, pair, rate_hz)"},
		{"rate_hz: 20", "rate_hz: fast", "t.yaml:5: rate_hz: cannot unmarshal !!str `fast` into float64"},
		{"levels: {low: 1, high: 2}", "levels: {low: 1, high: x}", "t.yaml:10: levels.high: cannot unmarshal"},
		{"pair: [1, 2]", "pair: [1, 2, 3]", "t.yaml:11: pair: 3 values, want 2"},
	} {
		c, err := ParseFile("t.yaml", []byte(strings.Replace(decodeDoc, tc.from, tc.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var p testParams
		err = c.Decode("", &p)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want a *FieldError containing %q", tc.to, err, tc.want)
		}
	}
}
