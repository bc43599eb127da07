package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const minimal = `name: t
duration: 2s
signals:
  - {name: pan, topic: /saint/sim/truth/head, field: angles.0}
timeline:
  - {at: 0.5s, ws: {type: command, target: head, action: home}}
metrics:
  - {name: m, kind: max_abs, signal: pan, max: 1}
plots:
  - {file: p.png, signals: [pan]}
`

func TestParseMinimal(t *testing.T) {
	sc, err := Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Duration.D() != 2*time.Second || sc.Timeline[0].At.D() != 500*time.Millisecond || sc.Timeline[0].line != 6 {
		t.Errorf("parsed %+v", sc)
	}
}

func TestParseRepeats(t *testing.T) {
	sc, err := Parse([]byte(strings.Replace(minimal, "{at: 0.5s,", "{at: 0.5s, every: 0.5s, until: 1.5s,", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var ats []time.Duration
	for _, e := range sc.Timeline {
		ats = append(ats, e.At.D())
	}
	if len(ats) != 3 || ats[0] != 500*time.Millisecond || ats[2] != 1500*time.Millisecond {
		t.Errorf("repeated at %v, want 0.5s, 1s, 1.5s", ats)
	}
}

// Mistakes are reported with their line and field.
func TestParseErrors(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"unknown key", "duration: 2s", "duration: 2s\nspeed: 3", "field speed not found"},
		{"no name", "name: t\n", "", "line 1: name: missing"},
		{"bad duration", "duration: 2s", "duration: soon", `"soon" is not a duration`},
		{"event after the end", "at: 0.5s", "at: 3s", "line 6: timeline[0].at: 3s is outside"},
		{"two inputs in one event", "action: home}}", "action: home}, push: {body: tracks}}", "line 6: timeline[0]: want exactly one of"},
		{"unknown metric kind", "kind: max_abs", "kind: wobble", `line 8: metrics[0].kind: "wobble" is not one of`},
		{"no tolerance", ", max: 1}", "}", "line 8: metrics[0]: needs a tolerance"},
		{"unknown signal", "signal: pan, max", "signal: tilt, max", `line 8: metrics[0]: signal "tilt" is not among signals`},
		{"settling without band", "kind: max_abs, signal: pan", "kind: settling_time, target: 1, signal: pan", "line 8: metrics[0].band"},
		{"plot not png", "file: p.png", "file: p.svg", "line 10: plots[0].file"},
		{"signal without topic", "topic: /saint/sim/truth/head, ", "", "line 4: signals[0].topic"},
		{"repeat without until", "{at: 0.5s,", "{at: 0.5s, every: 0.1s,", "line 6: timeline[0].every"},
		{"floor patch backwards", "duration: 2s", "duration: 2s\ninitial:\n  floor: [{from: 2, to: 1, mu: 0.1}]", "line 4: initial.floor[0]: want finite from < to"},
		{"negative friction", "duration: 2s", "duration: 2s\ninitial:\n  floor: [{from: 0, to: 1, mu: -0.1}]", "line 4: initial.floor[0].mu"},
		{"bad floor in set", "ws: {type: command, target: head, action: home}", "set: {floor: [{from: 0, to: 1, mu: .nan}]}", "line 6: timeline[0].set.floor[0].mu"},
		{"bump too short", "duration: 2s", "duration: 2s\ninitial:\n  bumps: [{at: 1, height: 0.05, length: 0.1}]", "line 4: initial.bumps[0].length: 0.1 m is too short"},
		{"overlapping bumps in set", "ws: {type: command, target: head, action: home}", "set: {bumps: [{at: 1, height: 0.02, length: 0.3}, {at: 1.1, height: 0.02, length: 0.3}]}", "line 6: timeline[0].set.bumps[1]: overlaps bumps[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(minimal, tc.old) {
				t.Fatalf("%q not in the scenario", tc.old)
			}
			_, err := Parse([]byte(strings.Replace(minimal, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// Every scenario of the library parses, and so do the pending ones (which
// show a defect still open, so the library does not run them).
func TestLibraryParses(t *testing.T) {
	pending, err := filepath.Glob(filepath.Join(scenarioDir, "pending", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(scenarioFiles(t), pending...) {
		if _, err := ReadFile(f); err != nil {
			t.Error(err)
		}
	}
}
