package rt

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEnterMatchesTheThread enters real-time mode on a goroutine of its own
// (whose thread ends with it) and checks the report against what the kernel
// says about that thread: each step either took effect or is explained.
func TestEnterMatchesTheThread(t *testing.T) {
	type result struct {
		r      Report
		attr   *unix.SchedAttr
		cpus   unix.CPUSet
		errAtt error
	}
	ch := make(chan result)
	go func() {
		r := Enter(Options{CPU: DefaultCPU(), NoMemoryLock: true})
		var res result
		res.r = r
		res.attr, res.errAtt = unix.SchedGetAttr(0, 0)
		_ = unix.SchedGetaffinity(0, &res.cpus)
		ch <- res
		// Returning while locked ends the thread, taking its priority
		// with it.
	}()
	res := <-ch
	if res.errAtt != nil {
		t.Fatal(res.errAtt)
	}
	r := res.r
	t.Logf("report: %s; warning: %q", r, r.Warning())
	if !r.ThreadLocked {
		t.Error("thread not locked")
	}
	if r.FIFO != (res.attr.Policy == unix.SCHED_FIFO) {
		t.Errorf("report says FIFO=%v, thread policy is %d", r.FIFO, res.attr.Policy)
	}
	if r.FIFO && int(res.attr.Priority) != r.Priority {
		t.Errorf("priority %d reported, thread has %d", r.Priority, res.attr.Priority)
	}
	if !r.FIFO && !strings.Contains(r.Warning(), "CAP_SYS_NICE") {
		t.Errorf("SCHED_FIFO refused but the warning does not name CAP_SYS_NICE: %q", r.Warning())
	}
	if r.CPU >= 0 && (res.cpus.Count() != 1 || !res.cpus.IsSet(r.CPU)) {
		t.Errorf("pinned to CPU %d reported, thread may run on %d CPUs", r.CPU, res.cpus.Count())
	}
	if r.MemoryLocked {
		t.Error("memory locked although NoMemoryLock was set")
	}
}

// TestRefusedPriorityNamesThePermission asks for a priority the kernel must
// refuse, and checks the report explains it rather than failing.
func TestRefusedPriorityNamesThePermission(t *testing.T) {
	ch := make(chan Report)
	go func() { ch <- Enter(Options{Priority: 100, CPU: -1, NoMemoryLock: true}) }()
	r := <-ch
	if r.FIFO || r.OK() {
		t.Fatalf("priority 100 accepted: %+v", r)
	}
	if !strings.Contains(r.Warning(), "1–99") {
		t.Errorf("warning %q does not give the valid range", r.Warning())
	}
}

func TestFIFOProblemNamesTheSettings(t *testing.T) {
	why := fifoProblem(49, unix.EPERM)
	for _, want := range []string{"CAP_SYS_NICE", "RLIMIT_RTPRIO", "LimitRTPRIO=", "AmbientCapabilities=CAP_SYS_NICE"} {
		if !strings.Contains(why, want) {
			t.Errorf("%q does not mention %s", why, want)
		}
	}
}
