package mitmotor

// The MIT-mode protocol's field widths, special frames and the value
// ranges of common actuators. The ranges are firmware settings (the
// P_MIN…T_MAX constants of the Mini Cheetah firmware and of the AK series'
// MIT mode): an actuator flashed with other ranges needs a Model of its own.

// Field widths, bits.
const (
	PositionBits = 16
	VelocityBits = 12
	KpBits       = 12
	KdBits       = 12
	TorqueBits   = 12
)

// Last bytes of the special frames (the first seven are FF).
const (
	SpecialEnable  = 0xFC // enter motor mode
	SpecialDisable = 0xFD // exit motor mode
	SpecialZero    = 0xFE // the present position becomes zero
)

// DefaultHostID is the CAN id replies are sent to (the firmware's
// CAN_MASTER).
const DefaultHostID = 0

// TemperatureOffset is added to the driver temperature (°C) in the
// optional seventh reply byte.
const TemperatureOffset = 40

// knownModels lists the actuators whose ranges are known.
func knownModels() []Model {
	return []Model{
		{Name: "mini_cheetah", Position: Range{-12.5, 12.5}, Velocity: Range{-65, 65}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-18, 18}},
		{Name: "ak60_6", Position: Range{-12.5, 12.5}, Velocity: Range{-45, 45}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-15, 15}},
		{Name: "ak70_10", Position: Range{-12.5, 12.5}, Velocity: Range{-50, 50}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-24, 24}},
		{Name: "ak80_9", Position: Range{-12.5, 12.5}, Velocity: Range{-50, 50}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-18, 18}},
		{Name: "ak10_9", Position: Range{-12.5, 12.5}, Velocity: Range{-50, 50}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-65, 65}},
		{Name: "gim8108_8", Position: Range{-12.5, 12.5}, Velocity: Range{-45, 45}, Kp: Range{0, 500}, Kd: Range{0, 5}, Torque: Range{-18, 18}},
	}
}
