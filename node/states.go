package node

import "github.com/saint-os/saint/bus/msg"

// State is a node lifecycle state.
type State = string

// Event is something that moves the state machine.
type Event string

// Events of the node state machine.
const (
	// EvUpdateAvailable: the server has newer firmware (or a factory reset
	// forced a re-download).
	EvUpdateAvailable Event = "update_available"
	// EvUpdateApplied: a verified image was installed; the node reboots.
	EvUpdateApplied Event = "update_applied"
	// EvNoRole: no stored role (or the server declared it invalid).
	EvNoRole Event = "no_role"
	// EvRoleValid: the stored role was validated with the server and started.
	EvRoleValid Event = "role_valid"
	// EvAdopt: the server called the adopt service.
	EvAdopt Event = "adopt"
	// EvAdopted: configuration downloaded, peripherals verified, role running.
	EvAdopted Event = "adopted"
	// EvAdoptFailed: the board lacks what the role needs, or the role did
	// not start.
	EvAdoptFailed Event = "adopt_failed"
	// EvReset: soft reset (service), hard reset (button held) or factory
	// reset. The role is cleared and the node boots again.
	EvReset Event = "reset"
	// EvReboot: a software reboot (trigger_update): the role is kept.
	EvReboot Event = "reboot"
)

// Next returns the state that event leads to from s, and false if the event
// is not accepted in s (the node ignores it, or refuses the request that
// caused it).
func Next(s State, e Event) (State, bool) {
	switch e {
	case EvReset, EvReboot:
		// Every state can be reset or rebooted; an update in progress is
		// the exception, so a reset cannot leave a half-written image.
		if s == msg.StateUpdating {
			return s, false
		}
		return msg.StateBoot, true
	}
	switch s {
	case msg.StateBoot:
		switch e {
		case EvUpdateAvailable:
			return msg.StateUpdating, true
		case EvNoRole:
			return msg.StateUnadopted, true
		case EvRoleValid:
			return msg.StateActive, true
		}
	case msg.StateUpdating:
		switch e {
		case EvUpdateApplied:
			return msg.StateBoot, true
		// A refused or failed update leaves the node running its current
		// firmware: it goes on to the role check.
		case EvNoRole:
			return msg.StateUnadopted, true
		case EvRoleValid:
			return msg.StateActive, true
		}
	case msg.StateUnadopted:
		if e == EvAdopt {
			return msg.StateAdopting, true
		}
	case msg.StateAdopting:
		switch e {
		case EvAdopted:
			return msg.StateActive, true
		case EvAdoptFailed:
			return msg.StateUnadopted, true
		}
	}
	return s, false
}
