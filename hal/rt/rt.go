package rt

import (
	"fmt"
	"strings"
	"time"
)

// Spin is how long before each deadline a real-time control loop polls the
// clock instead of sleeping (executor.Options.Spin): long enough to cover
// the wake-up latency of a sleeping thread on a loaded machine, short enough
// to leave a 1 kHz loop's core mostly idle.
const Spin = 100 * time.Microsecond

// DefaultPriority is the SCHED_FIFO priority a control loop gets unless told
// otherwise: above the kernel's threaded interrupt handlers' default of 50
// would starve them, so it sits just below them; ordinary processes (priority
// 0, SCHED_OTHER) never preempt it.
const DefaultPriority = 49

// Options says what Enter asks for. The zero value asks for everything:
// DefaultPriority, pinned to CPU 0, memory locked.
type Options struct {
	// Priority is the SCHED_FIFO priority, 1–99; 0 means DefaultPriority.
	Priority int
	// CPU is the CPU the thread is pinned to; -1 means no pinning and 0…
	// a CPU number. The zero value pins to CPU 0, so callers usually pass
	// DefaultCPU().
	CPU int
	// NoMemoryLock leaves memory unlocked.
	NoMemoryLock bool
}

// Report says what Enter obtained, and for each step it could not take, why.
type Report struct {
	ThreadLocked bool // the goroutine runs on its own OS thread
	FIFO         bool // the thread is scheduled SCHED_FIFO
	Priority     int  // at this priority
	CPU          int  // pinned to this CPU; -1 when not pinned
	MemoryLocked bool // mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT) is in force

	// Problems lists each step not taken, in words that name the missing
	// permission and the setting that grants it.
	Problems []string
}

// OK reports whether every step asked for was taken.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// String summarises the report in one line.
func (r Report) String() string {
	var parts []string
	if r.FIFO {
		parts = append(parts, fmt.Sprintf("SCHED_FIFO priority %d", r.Priority))
	} else {
		parts = append(parts, "normal scheduling")
	}
	if r.CPU >= 0 {
		parts = append(parts, fmt.Sprintf("CPU %d", r.CPU))
	}
	if r.MemoryLocked {
		parts = append(parts, "memory locked")
	}
	if r.ThreadLocked {
		parts = append(parts, "own OS thread")
	}
	return strings.Join(parts, ", ")
}

// Warning is the message to log when a step was not taken; empty when all
// were.
func (r Report) Warning() string {
	if r.OK() {
		return ""
	}
	return "real-time mode incomplete: " + strings.Join(r.Problems, "; ")
}

// UnitSettings are the systemd [Service] settings that let a service enter
// real-time mode without running as root: the two limits suffice, with no
// capability (AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK would too).
const UnitSettings = "LimitRTPRIO=99 and LimitMEMLOCK=infinity (or AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK)"
