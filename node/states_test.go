package node

import (
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

func TestNextTable(t *testing.T) {
	states := []State{msg.StateBoot, msg.StateUpdating, msg.StateUnadopted, msg.StateAdopting, msg.StateActive}
	events := []Event{EvUpdateAvailable, EvUpdateApplied, EvNoRole, EvRoleValid, EvAdopt, EvAdopted, EvAdoptFailed, EvReset, EvReboot}
	// want lists every accepted (state, event) pair; all others must be refused.
	want := map[State]map[Event]State{
		msg.StateBoot: {
			EvUpdateAvailable: msg.StateUpdating, EvNoRole: msg.StateUnadopted, EvRoleValid: msg.StateActive,
			EvReset: msg.StateBoot, EvReboot: msg.StateBoot,
		},
		msg.StateUpdating: {
			EvUpdateApplied: msg.StateBoot, EvNoRole: msg.StateUnadopted, EvRoleValid: msg.StateActive,
		},
		msg.StateUnadopted: {
			EvAdopt: msg.StateAdopting, EvReset: msg.StateBoot, EvReboot: msg.StateBoot,
		},
		msg.StateAdopting: {
			EvAdopted: msg.StateActive, EvAdoptFailed: msg.StateUnadopted, EvReset: msg.StateBoot, EvReboot: msg.StateBoot,
		},
		msg.StateActive: {
			EvReset: msg.StateBoot, EvReboot: msg.StateBoot,
		},
	}
	for _, s := range states {
		for _, e := range events {
			got, ok := Next(s, e)
			w, wantOK := want[s][e]
			if ok != wantOK {
				t.Errorf("Next(%s, %s) accepted = %v, want %v", s, e, ok, wantOK)
				continue
			}
			if ok && got != w {
				t.Errorf("Next(%s, %s) = %s, want %s", s, e, got, w)
			}
			if !ok && got != s {
				t.Errorf("Next(%s, %s) refused but moved to %s", s, e, got)
			}
		}
	}
}
