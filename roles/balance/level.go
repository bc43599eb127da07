package balance

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roles/rolekit"
)

// levelFile is the level calibration's name in the node's role state.
const levelFile = "balance_level.json"

// Level calibration: at rest on level ground the pitch estimate is off by
// the accelerometer's offset and the IMU's mounting (1.6–2° on the
// simulated base). While the base is disarmed and still the role keeps a
// running average of its raw estimate; `calibrate` (the console command,
// saintctl balance calibrate) makes that average the level, stores it on
// the node and subtracts it from every estimate after.
const (
	levelTau        = 0.5               // s, time constant of the running average
	levelStill      = 0.05              // rad/s: every axis of the corrected gyro below it counts as still
	levelSettle     = 2 * time.Second   // still this long before calibrate is accepted
	levelMaxOffset  = 5 * math.Pi / 180 // rad: a larger offset is a slope or a fault, not a mounting error
	levelOffsetJSON = "pitch_offset_deg"
)

// levelRecord is the stored calibration.
type levelRecord struct {
	PitchOffsetDeg float64 `json:"pitch_offset_deg"`
}

// level is the calibration's state; it runs on the executor.
type level struct {
	store    rolekit.State
	offset   float64 // rad, subtracted from the raw estimate
	avg      float64 // rad, running average of the raw estimate while still
	still    time.Duration
	loadErr  error
	hasStore bool
}

// loadLevel reads the stored calibration, if any. A record that cannot be
// read leaves the offset 0 and is reported by status (the base still
// balances, as it would uncalibrated).
func (b *Balance) loadLevel(st rolekit.State) {
	b.lvl = level{store: st, hasStore: st != nil}
	if st == nil {
		return
	}
	data, ok, err := st.Load(levelFile)
	if err != nil || !ok {
		b.lvl.loadErr = err
		return
	}
	var rec levelRecord
	// null and empty are no calibration either, and are reported as such.
	if err := persist.DecodeJSON(data, &rec); err != nil {
		b.lvl.loadErr = fmt.Errorf("%s: %w", levelFile, err)
		return
	}
	off := rec.PitchOffsetDeg * math.Pi / 180
	if math.IsNaN(off) || math.Abs(off) > levelMaxOffset {
		b.lvl.loadErr = fmt.Errorf("%s: %s %g° out of ±%g°", levelFile, levelOffsetJSON, rec.PitchOffsetDeg, levelMaxOffset*180/math.Pi)
		return
	}
	b.lvl.offset = off
}

// trackLevel updates the running average with the raw estimate while the
// base is disarmed and still, and returns the calibrated pitch.
func (b *Balance) trackLevel(raw float64, gyro [3]float64, dt float64) float64 {
	still := b.state != StateArmed
	for _, g := range gyro {
		still = still && math.Abs(g) < levelStill
	}
	if still {
		if b.lvl.still == 0 {
			b.lvl.avg = raw
		}
		b.lvl.avg += (raw - b.lvl.avg) * dt / levelTau
		b.lvl.still += time.Duration(dt * float64(time.Second))
	} else {
		b.lvl.still = 0
	}
	return raw - b.lvl.offset
}

// calibrateLevel is the console's calibrate: the averaged raw estimate
// becomes the level, stored on the node.
func (b *Balance) calibrateLevel() (string, bool) {
	switch {
	case b.state == StateArmed:
		return "calibrate: refused: armed; disarm and hold the base level and still", false
	case b.lvl.still < levelSettle:
		return fmt.Sprintf("calibrate: refused: the base has been still %.1f s, needs %.0f s (disarmed, level, untouched)",
			b.lvl.still.Seconds(), levelSettle.Seconds()), false
	case math.Abs(b.lvl.avg) > levelMaxOffset:
		return fmt.Sprintf("calibrate: refused: the estimate reads %.2f° at rest, more than ±%g°: not level ground, or a fault",
			b.lvl.avg*180/math.Pi, levelMaxOffset*180/math.Pi), false
	}
	off := b.lvl.avg
	if b.lvl.store == nil {
		return "calibrate: refused: this node has no storage for the calibration", false
	}
	data, err := json.Marshal(levelRecord{PitchOffsetDeg: off * 180 / math.Pi})
	if err == nil {
		err = b.lvl.store.Save(levelFile, data)
	}
	if err != nil {
		return "calibrate: not stored: " + err.Error(), false
	}
	b.lvl.offset, b.lvl.loadErr = off, nil
	return fmt.Sprintf("calibrate: level offset %.3f° stored on the node", off*180/math.Pi), true
}

// levelStatus is the console status's line about the calibration.
func (b *Balance) levelStatus() string {
	switch {
	case b.lvl.loadErr != nil:
		return fmt.Sprintf("level offset %.3f° (stored calibration unreadable: %v)", b.lvl.offset*180/math.Pi, b.lvl.loadErr)
	case !b.lvl.hasStore:
		return fmt.Sprintf("level offset %.3f° (no storage on this node)", b.lvl.offset*180/math.Pi)
	}
	return fmt.Sprintf("level offset %.3f°", b.lvl.offset*180/math.Pi)
}
