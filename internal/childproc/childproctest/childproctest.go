// Package childproctest reads processes from Linux's /proc for the tests
// that kill a parent and check that its children go with it: a process is
// named by its id and its start time, so an id the kernel hands to a new
// process is not mistaken for the old one, and a zombie counts as gone
// (it runs nothing; reaping it is its new parent's business).
package childproctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
)

// Proc is one process: its id and its start time (clock ticks after boot).
type Proc struct {
	PID   int
	PPID  int
	Comm  string
	Start uint64
}

func (p Proc) String() string { return fmt.Sprintf("%s (pid %d)", p.Comm, p.PID) }

// stat reads /proc/PID/stat: the process, its state letter, and whether
// it exists.
func stat(pid int) (Proc, byte, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, 0, false
	}
	// comm is in parentheses and may hold spaces and parentheses itself:
	// the fields after it start after the last ')'.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, 0, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 {
		return Proc{}, 0, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return Proc{PID: pid, PPID: ppid, Comm: s[open+1 : end], Start: start}, f[0][0], true
}

// Find returns the process with id pid, if there is one.
func Find(pid int) (Proc, bool) {
	p, _, ok := stat(pid)
	return p, ok
}

// Running reports whether p still exists and is not a zombie.
func (p Proc) Running() bool {
	now, state, ok := stat(p.PID)
	return ok && now.Start == p.Start && state != 'Z' && state != 'X'
}

// Children lists the running processes whose parent is pid.
func Children(pid int) []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Proc
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, state, ok := stat(id); ok && p.PPID == pid && state != 'Z' && state != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// WaitChild waits up to within for a running child of parent named comm
// (as /proc shows it: the first 15 bytes of the program's name) and
// returns it.
func WaitChild(t testing.TB, parent int, comm string, within time.Duration) Proc {
	t.Helper()
	var found Proc
	bustest.CheckFor(t, within, 10*time.Millisecond, func() error {
		for _, c := range Children(parent) {
			if c.Comm == comm {
				found = c
				return nil
			}
		}
		return fmt.Errorf("no child %q of process %d: %v", comm, parent, Children(parent))
	})
	return found
}

// WaitGone waits up to within for every one of procs to be gone (or a
// zombie) and fails the test naming those still running.
func WaitGone(t testing.TB, within time.Duration, procs ...Proc) {
	t.Helper()
	bustest.CheckFor(t, within, 5*time.Millisecond, func() error {
		var left []string
		for _, p := range procs {
			if p.Running() {
				left = append(left, p.String())
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

// Kill sends SIGKILL to p if it is still the process it was (for a
// test's cleanup: an id the kernel handed on is left alone).
func (p Proc) Kill() {
	if !p.Running() {
		return
	}
	if q, err := os.FindProcess(p.PID); err == nil {
		_ = q.Kill()
	}
}
