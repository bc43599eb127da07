package router

import (
	"encoding/json"
	"io/fs"
	"math"
	"testing"

	"github.com/saint-os/saint/fixtures"
)

// addPresetSeeds adds the shipped presets to f.
func addPresetSeeds(f *testing.F) {
	sub, err := fs.Sub(fixtures.Config(), "routes")
	if err != nil {
		f.Fatal(err)
	}
	seeds, err := seedPresets(sub)
	if err != nil {
		f.Fatal(err)
	}
	for _, data := range seeds {
		f.Add(data)
	}
}

// A preset or the active routes file (YAML) from anywhere never panics
// the decoder; what it accepts is valid, maps every finite input to a
// finite output, and reads back the same after being written.
func FuzzParseConfig(f *testing.F) {
	addPresetSeeds(f)
	f.Add([]byte("routes: []\n"))
	f.Add([]byte("blending: {mode: blend, blend_time_ms: 100}\nroutes:\n- {id: a, input: {source: rc}, output: {target: head}, mapping: passthrough}\n"))
	f.Add([]byte("routes: [{id: x, mapping: [{input: a, output: pan, deadzone: -1}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted a configuration that does not validate: %v", err)
		}
		checkMappings(t, cfg.Routes)
		out, err := MarshalConfig(cfg)
		if err != nil {
			t.Fatalf("MarshalConfig: %v", err)
		}
		again, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("a written configuration does not read back: %v\n%s", err, out)
		}
		if len(again.Routes) != len(cfg.Routes) {
			t.Fatalf("%d routes read back, %d written", len(again.Routes), len(cfg.Routes))
		}
	})
}

// checkMappings applies every mapping of the routes to a few finite
// inputs: the outputs are finite.
func checkMappings(t *testing.T, routes []Route) {
	t.Helper()
	for _, rt := range routes {
		for i := range rt.Mapping.List {
			m := &rt.Mapping.List[i]
			for _, v := range []float64{-1e6, -1, -0.5, 0, 0.25, 1, 1e6} {
				if out := m.Apply(v); math.IsNaN(out) || math.IsInf(out, 0) {
					t.Fatalf("route %s mapping %d: Apply(%g) = %g", rt.ID, i, v, out)
				}
			}
		}
	}
}

// router set_route's parameters (JSON from a WebSocket client) never
// panic the decoder; a route it accepts is valid and survives a round
// trip through JSON.
func FuzzDecodeRoute(f *testing.F) {
	f.Add([]byte(`{"route": {"id": "rc_head", "enabled": true, "priority": 300, "input": {"source": "rc"},
		"output": {"target": "head"}, "mapping": [{"input": "channel_4", "output": "pan", "scale": -90, "deadzone": 0.05}]}}`))
	f.Add([]byte(`{"route": {"id": "ws", "input": {"source": "websocket"}, "output": {"target": "any"}, "mapping": "passthrough"}}`))
	f.Add([]byte(`{"route": {"id": "sw", "input": {"source": "rc"}, "output": {"target": "tracks"},
		"mapping": [{"input": "channel_5", "output": "estop", "mode": "switch", "threshold": 0.5}]}}`))
	f.Add([]byte(`{"route": {"id": "x", "mapping": [{"input": "a", "output": "pan", "curve": "exponential", "expo": 2}]}}`))
	f.Add([]byte(`{"route": null}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		rt, err := decodeRoute(params)
		if err != nil {
			return
		}
		if err := rt.Validate(); err != nil {
			t.Fatalf("decodeRoute accepted an invalid route: %v", err)
		}
		checkMappings(t, []Route{rt})
		b, err := json.Marshal(map[string]any{"route": rt})
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := decodeRoute(b); err != nil {
			t.Fatalf("a route written as JSON does not read back: %v\n%s", err, b)
		}
	})
}
