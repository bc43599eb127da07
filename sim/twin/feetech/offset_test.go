package feetech_test

import (
	"testing"

	ft "github.com/saint-os/saint/hal/device/feetech"
	"github.com/saint-os/saint/sim/twin/feetech"
)

// Writing the STS position correction moves the servo's zero: it reports
// the measured position less the offset and drives to its goal plus it.
func TestPositionOffset(t *testing.T) {
	r := newRig(t, ft.STS, 1)
	s := r.twin.Servo(1)
	s.SetPresent(ft.Present{Position: 2548, Voltage: 12})
	r.driver.WriteRegister(1, feetech.RegOffset, []byte{0xF4, 0x01}, must(t)) // +500 steps
	var got ft.Present
	r.driver.ReadPresent(1, func(p ft.Present, err error) { got = p; must(t)(err) })
	r.run(t)
	if got.Position != 2048 {
		t.Errorf("present position %d with offset 500 at 2548 measured, want 2048", got.Position)
	}
	r.driver.SetGoal(ft.Goal{ID: 1, Position: 2048}, must(t))
	r.run(t)
	if g := s.Goal(); g.Position != 2548 {
		t.Errorf("goal %d in the measured frame, want 2548", g.Position)
	}
	// A negative offset: sign bit 11.
	r.driver.WriteRegister(1, feetech.RegOffset, []byte{0x64, 0x08}, must(t)) // −100
	r.driver.ReadPresent(1, func(p ft.Present, err error) { got = p; must(t)(err) })
	r.run(t)
	if got.Position != 2648 {
		t.Errorf("present position %d with offset −100 at 2548 measured, want 2648", got.Position)
	}
}
