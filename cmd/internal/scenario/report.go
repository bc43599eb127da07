package scenario

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Report is a run's outcome, written as report.json.
type Report struct {
	Scenario    string         `json:"scenario"`
	Description string         `json:"description,omitempty"`
	File        string         `json:"file,omitempty"`
	Seed        uint64         `json:"seed"`
	DurationS   float64        `json:"duration_s"`
	Pass        bool           `json:"pass"`
	Metrics     []MetricResult `json:"metrics"`
	Events      []EventResult  `json:"events"`
	Plots       []string       `json:"plots,omitempty"`
	// WallS is how long the run took on the wall clock.
	WallS float64 `json:"wall_s"`
}

// Failures lists the metrics and events that failed, one line each.
func (r *Report) Failures() []string {
	var out []string
	for _, e := range r.Events {
		if e.Error != "" {
			out = append(out, fmt.Sprintf("event at %.3gs (line %d) %s: %s", e.At, e.Line, e.What, e.Error))
		}
	}
	for _, m := range r.Metrics {
		if !m.Pass {
			out = append(out, fmt.Sprintf("metric %s (%s) = %.4g, tolerance %s %s", m.Name, m.Kind, m.Value, m.Tolerance, m.Detail))
		}
	}
	return out
}

func (t Tolerance) String() string {
	switch {
	case t.Min != nil && t.Max != nil:
		return fmt.Sprintf("[%.4g, %.4g]", *t.Min, *t.Max)
	case t.Max != nil:
		return fmt.Sprintf("≤ %.4g", *t.Max)
	case t.Min != nil:
		return fmt.Sprintf("≥ %.4g", *t.Min)
	}
	return "none"
}

// write puts report.json and the plots into dir.
func (r *Report) write(dir string, sc *Scenario, series map[string][]Sample) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range sc.Plots {
		if err := writePlot(filepath.Join(dir, p.File), sc.Name, p, series); err != nil {
			return fmt.Errorf("plot %s: %w", p.File, err)
		}
		r.Plots = append(r.Plots, p.File)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), append(data, '\n'), 0o644)
}

// writePlot draws the plot's signals against time (or as x, y pairs) into
// a 16×9 cm PNG.
func writePlot(file, scenario string, p Plot, series map[string][]Sample) error {
	pl := plot.New()
	pl.Title.Text = p.Title
	if pl.Title.Text == "" {
		pl.Title.Text = scenario
	}
	pl.X.Label.Text = "time (s)"
	pl.Y.Label.Text = p.YLabel
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = true
	step := 1
	if p.XY {
		step = 2
		pl.X.Label.Text = p.Signals[0]
		if p.YLabel == "" {
			pl.Y.Label.Text = p.Signals[1]
		}
	}
	for i := 0; i < len(p.Signals); i += step {
		var pts plotter.XYs
		name := p.Signals[i]
		if p.XY {
			xs, ys := series[p.Signals[i]], series[p.Signals[i+1]]
			for j := 0; j < min(len(xs), len(ys)); j++ {
				pts = append(pts, plotter.XY{X: xs[j].V, Y: ys[j].V})
			}
			name = p.Signals[i] + ", " + p.Signals[i+1]
		} else {
			for _, s := range series[name] {
				pts = append(pts, plotter.XY{X: s.T, Y: s.V})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i / step)
		l.Width = vg.Points(1.5)
		if i/step > 0 {
			l.Dashes = plotutil.Dashes(i / step)
		}
		pl.Add(l)
		pl.Legend.Add(name, l)
	}
	if p.XLabel != "" {
		pl.X.Label.Text = p.XLabel
	}
	// Headroom above the data for the legend.
	pl.Y.Max += 0.25 * (pl.Y.Max - pl.Y.Min)
	pl.BackgroundColor = color.White
	return pl.Save(16*vg.Centimeter, 9*vg.Centimeter, file)
}
