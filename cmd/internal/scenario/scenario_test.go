package scenario

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scenarioDir is the scenario library that make test runs.
const scenarioDir = "../../../fixtures/scenarios"

func scenarioFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in " + scenarioDir)
	}
	return files
}

// Every scenario of the library passes: this is the control loops'
// regression suite.
func TestScenarioLibrary(t *testing.T) {
	for _, file := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			t.Parallel()
			sc, err := ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			rep, err := Run(context.Background(), sc, Options{OutDir: out})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Failures() {
				t.Error(f)
			}
			if len(rep.Metrics) == 0 {
				t.Error("the scenario checks nothing")
			}
			// The report is on disk as the runner promises, with the plots.
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var onDisk Report
			if err := json.Unmarshal(data, &onDisk); err != nil {
				t.Fatal(err)
			}
			if onDisk.Pass != rep.Pass || len(onDisk.Metrics) != len(rep.Metrics) {
				t.Errorf("report.json says pass=%v with %d metrics", onDisk.Pass, len(onDisk.Metrics))
			}
			for _, p := range sc.Plots {
				b, err := os.ReadFile(filepath.Join(out, p.File))
				if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
					t.Errorf("plot %s: not a PNG (%v)", p.File, err)
				}
			}
		})
	}
}

// The same scenario gives the same numbers on every run: everything runs
// on one executor under the virtual clock, and the clock stands still
// while a WebSocket request is in flight.
func TestDeterministic(t *testing.T) {
	sc, err := ReadFile(filepath.Join(scenarioDir, "tracks_speed_step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var runs [2]*Report
	for i := range runs {
		if runs[i], err = Run(context.Background(), sc, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range runs[0].Metrics {
		if n := runs[1].Metrics[i]; n.Value != m.Value {
			t.Errorf("%s: %v then %v", m.Name, m.Value, n.Value)
		}
	}
}
