package balance

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/saint-os/saint/roles/rolekit"
)

// The level calibration: refused until the base has been still long
// enough, then the averaged estimate becomes the level, is stored, is
// subtracted, and is loaded again by a new role.
func TestLevelCalibration(t *testing.T) {
	st := &rolekit.MemState{}
	b := &Balance{state: StateDisarmed}
	b.loadLevel(st)
	const dt = 1e-3
	bias := 1.8 * math.Pi / 180
	for k := 0; k < 500; k++ {
		b.trackLevel(bias, [3]float64{0.001, -0.002, 0}, dt)
	}
	if out, ok := b.calibrateLevel(); ok || !strings.Contains(out, "still") {
		t.Fatalf("after 0.5 s still: %q, %v; want refused", out, ok)
	}
	for k := 0; k < 2000; k++ {
		b.trackLevel(bias, [3]float64{}, dt)
	}
	out, ok := b.calibrateLevel()
	if !ok {
		t.Fatalf("calibrate: %q", out)
	}
	if got := b.trackLevel(bias, [3]float64{}, dt); math.Abs(got) > 1e-9 {
		t.Fatalf("calibrated estimate %g rad at the level, want 0", got)
	}
	data, found, err := st.Load(levelFile)
	if err != nil || !found {
		t.Fatalf("stored: %v %v", found, err)
	}
	var rec levelRecord
	if err := json.Unmarshal(data, &rec); err != nil || math.Abs(rec.PitchOffsetDeg-1.8) > 1e-9 {
		t.Fatalf("stored %s (%v), want 1.8°", data, err)
	}
	again := &Balance{state: StateDisarmed}
	again.loadLevel(st)
	if math.Abs(again.lvl.offset-bias) > 1e-12 {
		t.Fatalf("a new role loads offset %g rad, want %g", again.lvl.offset, bias)
	}

	// Moving, armed, too far off level or without storage: refused.
	b.trackLevel(bias, [3]float64{0, 0.3, 0}, dt)
	if _, ok := b.calibrateLevel(); ok {
		t.Error("calibrated right after moving")
	}
	b.state = StateArmed
	if _, ok := b.calibrateLevel(); ok {
		t.Error("calibrated while armed")
	}
	slope := &Balance{state: StateDisarmed}
	slope.loadLevel(st)
	for k := 0; k < 3000; k++ {
		slope.trackLevel(8*math.Pi/180, [3]float64{}, dt)
	}
	if out, ok := slope.calibrateLevel(); ok || !strings.Contains(out, "level ground") {
		t.Errorf("8° off: %q, %v; want refused", out, ok)
	}
	none := &Balance{state: StateDisarmed}
	none.loadLevel(nil)
	for k := 0; k < 3000; k++ {
		none.trackLevel(bias, [3]float64{}, dt)
	}
	if out, ok := none.calibrateLevel(); ok || !strings.Contains(out, "storage") {
		t.Errorf("no storage: %q, %v; want refused", out, ok)
	}

	// A corrupt record leaves the offset 0 and says so.
	_ = st.Save(levelFile, []byte("{"))
	bad := &Balance{state: StateDisarmed}
	bad.loadLevel(st)
	if bad.lvl.offset != 0 || !strings.Contains(bad.levelStatus(), "unreadable") {
		t.Errorf("corrupt record: offset %g, status %q", bad.lvl.offset, bad.levelStatus())
	}
}
