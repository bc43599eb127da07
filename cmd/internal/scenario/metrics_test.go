package scenario

import (
	"math"
	"testing"
	"time"
)

func ptr(v float64) *float64 { return &v }

func series(name string, f func(t float64) float64) map[string][]Sample {
	var s []Sample
	for i := 0; i <= 100; i++ {
		t := float64(i) * 0.02
		s = append(s, Sample{t, f(t)})
	}
	return map[string][]Sample{name: s}
}

func TestMetrics(t *testing.T) {
	// A step at 0.5 s to 10, overshooting to 12 at 0.7 s and settling
	// within 0.5 from 1.2 s.
	step := series("y", func(t float64) float64 {
		switch {
		case t < 0.5:
			return 0
		case t < 0.7:
			return 10
		case t < 0.72:
			return 12
		case t < 1.2:
			return 9
		}
		return 10.2
	})
	cases := []struct {
		m    Metric
		want float64
		pass bool
	}{
		{Metric{Kind: KindOvershoot, Signal: "y", From: Duration(400 * time.Millisecond), Target: ptr(10), Max: ptr(1)}, 2, false},
		{Metric{Kind: KindSettlingTime, Signal: "y", From: Duration(500 * time.Millisecond), Target: ptr(10), Band: 0.5, Max: ptr(1)}, 0.7, true},
		{Metric{Kind: KindMaxAbs, Signal: "y", Max: ptr(12)}, 12, true},
		{Metric{Kind: KindMin, Signal: "y", From: Duration(time.Second), Min: ptr(9.5)}, 9, false},
		{Metric{Kind: KindFinal, Signal: "y", Target: ptr(10), Min: ptr(-0.5), Max: ptr(0.5)}, 0.2, true},
		{Metric{Kind: KindFinal, Signal: "y", To: durPtr(600 * time.Millisecond), Min: ptr(9.9), Max: ptr(10.1)}, 10, true},
		{Metric{Kind: KindChange, Signal: "y", From: Duration(time.Second), Max: ptr(1)}, 1.2, false},
		{Metric{Kind: KindChange, Signal: "y", To: durPtr(600 * time.Millisecond), Max: ptr(11)}, 10, true},
	}
	for _, tc := range cases {
		got := evaluate(tc.m, step, 2*time.Second)
		if math.Abs(got.Value-tc.want) > 1e-9 || got.Pass != tc.pass {
			t.Errorf("%s: got %v (pass %v), want %v (pass %v)", tc.m.Kind, got.Value, got.Pass, tc.want, tc.pass)
		}
	}
}

func durPtr(d time.Duration) *Duration { v := Duration(d); return &v }

func TestLatency(t *testing.T) {
	// A speed that ramps down from 1 at 1 s to 0 at 1.5 s.
	s := series("v", func(t float64) float64 { return math.Max(0, math.Min(1, (1.5-t)*2)) })
	got := evaluate(Metric{Kind: KindLatency, Signals: []string{"v"}, From: Duration(time.Second), Threshold: 0.01, Max: ptr(0.6)}, s, 2*time.Second)
	if math.Abs(got.Value-0.5) > 0.021 || !got.Pass {
		t.Errorf("latency %v pass %v, want 0.5 s", got.Value, got.Pass)
	}
	never := evaluate(Metric{Kind: KindLatency, Signals: []string{"v"}, To: durPtr(1200 * time.Millisecond), Threshold: 0.01, Max: ptr(5)}, s, 2*time.Second)
	if never.Detail == "" || never.Value != 1.2 {
		t.Errorf("a signal that never rests: %+v", never)
	}
}

func TestPathErrorAndDrift(t *testing.T) {
	sig := map[string][]Sample{
		"x":  {{0, 0}, {1, 0.5}, {2, 1}},
		"y":  {{0, 0}, {1, 0.1}, {2, 0}},
		"ox": {{2, 1.3}},
		"oy": {{2, 0.4}},
	}
	pe := evaluate(Metric{Kind: KindPathError, Signals: []string{"x", "y"}, Path: [][2]float64{{0, 0}, {1, 0}}, Max: ptr(0.05)}, sig, 2*time.Second)
	if math.Abs(pe.Value-0.1) > 1e-9 || pe.Pass {
		t.Errorf("path error %+v, want 0.1 failing", pe)
	}
	dr := evaluate(Metric{Kind: KindOdometryDrift, Signals: []string{"ox", "oy", "x", "y"}, Max: ptr(1)}, sig, 2*time.Second)
	if math.Abs(dr.Value-0.5) > 1e-9 || !dr.Pass {
		t.Errorf("drift %+v, want 0.5", dr)
	}
}

func TestNoSamplesFails(t *testing.T) {
	got := evaluate(Metric{Kind: KindMaxAbs, Signal: "none", Max: ptr(1)}, nil, time.Second)
	if got.Pass || got.Detail == "" {
		t.Errorf("a metric without samples: %+v", got)
	}
}

func TestField(t *testing.T) {
	v := map[string]any{"pose": map[string]any{"position": map[string]any{"x": 1.5}}, "a": []any{2.0, true}}
	for path, want := range map[string]float64{"pose.position.x": 1.5, "a.0": 2, "a.1": 1} {
		if got, ok := field(v, path); !ok || got != want {
			t.Errorf("%s: %v %v", path, got, ok)
		}
	}
	for _, path := range []string{"pose.x", "a.2", "a.x", "pose"} {
		if _, ok := field(v, path); ok {
			t.Errorf("%s found", path)
		}
	}
}
