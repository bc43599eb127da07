package msg

import (
	"math"
	"reflect"
	"testing"
)

func TestCommandLimitsApply(t *testing.T) {
	head := CommandLimits{Fields: []FieldLimit{{"pan", -90, 90}, {"tilt", -30, 45}, {"speed", 0, 0.5}}}
	got := head.Apply(map[string]float64{"pan": 120, "tilt": -10, "speed": 1, "jaw": 0.3, "roll": math.NaN()})
	want := []Clamp{{"pan", 120, 90}, {"speed", 1, 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("head: %+v, want %+v", got, want)
	}
	if got := head.Apply(map[string]float64{"pan": 90, "tilt": -30}); got != nil {
		t.Errorf("values at the limits reported clamped: %+v", got)
	}
}

func TestCommandLimitsTwist(t *testing.T) {
	l := CommandLimits{Fields: []FieldLimit{{"linear", -1, 1}, {"angular", -2, 2}},
		MaxTrackSpeed: 1.1, HalfGauge: 0.2, TurnSlip: 0.02}
	// Within every limit: untouched.
	if v, w := l.ClampTwist(0.5, 1); v != 0.5 || w != 1 {
		t.Errorf("ClampTwist(0.5, 1) = %v, %v", v, w)
	}
	// Linear over its limit only.
	if got := l.Apply(map[string]float64{"linear": 3, "angular": 0}); !reflect.DeepEqual(got, []Clamp{{"linear", 3, 1}}) {
		t.Errorf("linear 3: %+v", got)
	}
	// Both within their limits but too fast for a track together
	// (1 + 2·0.2 + 0.02 = 1.42 m/s): both scaled by 1.1/1.42.
	v, w := l.ClampTwist(1, 2)
	if k := 1.1 / 1.42; math.Abs(v-k) > 1e-12 || math.Abs(w-2*k) > 1e-12 {
		t.Errorf("ClampTwist(1, 2) = %v, %v; want %v, %v", v, w, k, 2*k)
	}
	got := l.Apply(map[string]float64{"linear": 1, "angular": 2})
	if len(got) != 2 || got[0].Field != "angular" || got[0].Applied != w || got[1].Field != "linear" || got[1].Applied != v {
		t.Errorf("linear 1, angular 2: %+v", got)
	}
}
