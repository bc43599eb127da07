package vesc

// The VESC CAN protocol's command numbers and value scales, as the
// firmware's comm_can.c defines them: what a frame id and its payload mean.

// Command numbers (comm_can.c CAN_PACKET_*).
const (
	CmdSetDuty         = 0
	CmdSetCurrent      = 1
	CmdSetCurrentBrake = 2
	CmdSetRPM          = 3
	CmdSetPos          = 4
	CmdStatus          = 9
	CmdStatus4         = 16
	CmdStatus5         = 27
)

// Scales of the command values on the wire.
const (
	DutyScale    = 100000
	CurrentScale = 1000
	PosScale     = 1000000
)
