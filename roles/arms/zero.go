package arms

import (
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/hal/device/feetech"
)

// Feetech STS registers the zero calibration uses, beyond the driver's.
const (
	// armsRegOffset is the STS position correction (EPROM, 2 bytes, sign
	// bit 11, steps): the servo reports and obeys its raw position less
	// this offset.
	armsRegOffset     = 0x1F
	armsOffsetSignBit = 11
	armsMaxOffset     = 2047
	// armsRegTorqueLimit is the STS run-time torque limit (RAM, 2 bytes,
	// 0.1 % of the maximum torque); the maximum itself (0x10) is EPROM.
	armsRegTorqueLimit = 0x30
)

// calibrateZero makes every joint servo's present position its centre (the
// motor's zero) in its EPROM: for each servo, torque off, read its offset
// and present position, unlock the EPROM, write offset + (present −
// centre), lock it again. done runs on the executor once every servo is
// written, or at the first failure.
func (a *Arms) calibrateZero(done func(error)) {
	if a.fbus == nil {
		done(errors.New("servo bus closed"))
		return
	}
	fb := a.fbus
	model := fb.Model()
	if model != feetech.STS {
		done(fmt.Errorf("%v servos have no position offset register", model))
		return
	}
	j := a.cfg.joints
	var next func(i int)
	next = func(i int) {
		if i == len(j.MapIndex) {
			done(nil)
			return
		}
		id := a.ids[i]
		fail := func(step string, err error) {
			done(fmt.Errorf("%s (servo %d): %s: %w", j.JointNames[i], id, step, err))
		}
		// Each step runs when the previous one has answered.
		lock := func() {
			fb.WriteRegister(id, feetech.RegLock, []byte{1}, func(err error) {
				if err != nil {
					fail("locking the EPROM", err)
					return
				}
				next(i + 1)
			})
		}
		write := func(offset int) {
			fb.WriteRegister(id, feetech.RegLock, []byte{0}, func(err error) {
				if err != nil {
					fail("unlocking the EPROM", err)
					return
				}
				b := make([]byte, 2)
				model.Put16(b, feetech.EncodeSigned(offset, armsOffsetSignBit))
				fb.WriteRegister(id, armsRegOffset, b, func(err error) {
					if err != nil {
						fail("writing the offset", err)
						return
					}
					lock()
				})
			})
		}
		fb.SetTorque(id, false, func(err error) {
			if err != nil {
				fail("torque off", err)
				return
			}
			a.servos[i].torqueOn, a.servos[i].limit = false, -1
			fb.ReadRegister(id, armsRegOffset, 2, func(data []byte, _ time.Time, err error) {
				if err != nil {
					fail("reading the offset", err)
					return
				}
				old := feetech.DecodeSigned(model.Get16(data), armsOffsetSignBit)
				fb.ReadPresent(id, func(p feetech.Present, err error) {
					if err != nil {
						fail("reading the position", err)
						return
					}
					offset := old + p.Position - model.Center()
					if offset > armsMaxOffset || offset < -armsMaxOffset {
						fail("offset", fmt.Errorf("%d steps is beyond the servo's ±%d", offset, armsMaxOffset))
						return
					}
					write(offset)
				})
			})
		})
	}
	next(0)
}

// asStatusError reports whether err is a servo's status error.
func asStatusError(err error, se **feetech.StatusError) bool { return errors.As(err, se) }
