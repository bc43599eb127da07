//go:build cgo

package mujoco

import (
	"flag"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotDir, when set, is where the tests draw both trajectories of every
// case (go test ./sim/oracle/mujoco -args -plots $PWD/docs/oracle).
var plotDir = flag.String("plots", "", "directory to write trajectory plots (PNG) into")

// worldStep is the simulator's step; oracleSubsteps MuJoCo RK4 steps make
// one of it, so the reference is integrated 10× finer than the model.
const (
	worldStep      = 1e-3
	oracleSubsteps = 10
)

// trace is one compared channel: the Go model's and MuJoCo's values at
// every world step.
type trace struct {
	name     string
	unit     string
	goVal    []float64
	mjVal    []float64
	time     []float64
	scale    float64 // plotted values are multiplied by it (e.g. rad → °)
	plotUnit string
}

func (tr *trace) add(t, goV, mjV float64) {
	tr.time = append(tr.time, t)
	tr.goVal = append(tr.goVal, goV)
	tr.mjVal = append(tr.mjVal, mjV)
}

// rms is the root-mean-square difference of the two trajectories.
func (tr *trace) rms() float64 {
	var s float64
	for i := range tr.goVal {
		d := tr.goVal[i] - tr.mjVal[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(tr.goVal)))
}

// maxAbs is the largest difference and when it was.
func (tr *trace) maxAbs() (float64, float64) {
	var m, at float64
	for i := range tr.goVal {
		if d := math.Abs(tr.goVal[i] - tr.mjVal[i]); d > m {
			m, at = d, tr.time[i]
		}
	}
	return m, at
}

// span is the range of the oracle's values, to show the error against the
// motion.
func (tr *trace) span() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range tr.mjVal {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi - lo
}

// check fails the test when the RMS difference exceeds tol, and logs the
// measured errors either way (the numbers in docs/sim.md).
func (tr *trace) check(t *testing.T, tol float64) {
	t.Helper()
	if len(tr.goVal) == 0 {
		t.Fatalf("%s: no samples", tr.name)
	}
	for i := range tr.goVal {
		if math.IsNaN(tr.goVal[i]) || math.IsNaN(tr.mjVal[i]) {
			t.Fatalf("%s: NaN at t = %.3f s", tr.name, tr.time[i])
		}
	}
	rms := tr.rms()
	maxDiff, at := tr.maxAbs()
	t.Logf("%-14s RMS %.3g %s, max %.3g %s at %.3f s, range of motion %.3g %s (tolerance %.3g %s RMS)",
		tr.name, rms, tr.unit, maxDiff, tr.unit, at, tr.span(), tr.unit, tol, tr.unit)
	if rms > tol {
		t.Errorf("%s: RMS difference from MuJoCo %.3g %s, tolerance %.3g %s", tr.name, rms, tr.unit, tol, tr.unit)
	}
}

// plotTraces draws the traces of one case, Go solid and MuJoCo dashed, into
// plotDir/name.png.
func plotTraces(t *testing.T, name string, traces []*trace) {
	t.Helper()
	if *plotDir == "" {
		return
	}
	p := plot.New()
	p.Title.Text = name + ": Go model (solid) and MuJoCo (dashed)"
	p.X.Label.Text = "t (s)"
	if len(traces) > 0 {
		p.Y.Label.Text = traces[0].plotUnit
	}
	p.Legend.Top = true
	palette := []color.Color{
		color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255},
		color.RGBA{148, 103, 189, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{23, 190, 207, 255},
	}
	for i, tr := range traces {
		goPts := make(plotter.XYs, 0, len(tr.time)/5+1)
		mjPts := make(plotter.XYs, 0, len(tr.time)/5+1)
		for k := 0; k < len(tr.time); k += 5 {
			goPts = append(goPts, plotter.XY{X: tr.time[k], Y: tr.goVal[k] * tr.scale})
			mjPts = append(mjPts, plotter.XY{X: tr.time[k], Y: tr.mjVal[k] * tr.scale})
		}
		c := palette[i%len(palette)]
		gl, err := plotter.NewLine(goPts)
		if err != nil {
			t.Fatal(err)
		}
		gl.Color, gl.Width = c, vg.Points(1.5)
		ml, err := plotter.NewLine(mjPts)
		if err != nil {
			t.Fatal(err)
		}
		ml.Color, ml.Width, ml.Dashes = c, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(gl, ml)
		p.Legend.Add(tr.name, gl)
	}
	if err := os.MkdirAll(*plotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(*plotDir, name+".png")); err != nil {
		t.Fatal(err)
	}
}

// load compiles mjcf or fails the test.
func load(t *testing.T, mjcf string) *Sim {
	t.Helper()
	s, err := Load(mjcf)
	if err != nil {
		t.Fatalf("%v\n%s", err, mjcf)
	}
	t.Cleanup(s.Close)
	return s
}

func TestVersion(t *testing.T) {
	if v := Version(); v < 200 {
		t.Fatalf("MuJoCo version %d, want 2.x", v)
	}
}

func TestLoadRejectsBadModel(t *testing.T) {
	_, err := Load(`<mujoco><worldbody><body><joint type="nonsense"/></body></worldbody></mujoco>`)
	if err == nil {
		t.Fatal("Load accepted a model with an unknown joint type")
	}
}
