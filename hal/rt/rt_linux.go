package rt

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Capability bits in /proc/self/status's CapEff.
const (
	capIPCLock = 14
	capSysNice = 23
)

// DefaultCPU returns the highest-numbered CPU the process may run on: the
// one to give a control loop, and the one to keep other work off (systemd's
// CPUAffinity= for other services, or isolcpus= on the kernel command line).
// It returns -1 when the process may run on one CPU only, where pinning
// gains nothing.
func DefaultCPU() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		return -1
	}
	for cpu := len(set)*64 - 1; cpu >= 0; cpu-- {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	return -1
}

// Enter puts the calling goroutine in real-time mode: it locks it to its OS
// thread for good (the thread ends with the goroutine), pins the thread to
// o.CPU, schedules it SCHED_FIFO at o.Priority and locks the process's
// memory, each as far as permitted. Call it on the goroutine that runs the
// control executor, before Run or from one of its callbacks.
func Enter(o Options) Report {
	prio := o.Priority
	if prio == 0 {
		prio = DefaultPriority
	}
	runtime.LockOSThread()
	r := Report{ThreadLocked: true, CPU: -1}

	if o.CPU >= 0 {
		var set unix.CPUSet
		set.Set(o.CPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("not pinned to CPU %d: %v (the process's allowed CPUs, systemd CPUAffinity=, must include it)", o.CPU, err))
		} else {
			r.CPU = o.CPU
		}
	}

	if prio < 1 || prio > 99 {
		r.Problems = append(r.Problems, fmt.Sprintf("SCHED_FIFO priority %d is outside 1–99", prio))
	} else {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			r.Problems = append(r.Problems, fifoProblem(prio, err))
		} else {
			r.FIFO, r.Priority = true, prio
		}
	}

	if !o.NoMemoryLock {
		if why := memlockBlocked(); why != "" {
			r.Problems = append(r.Problems, why)
		} else if err := lockMemory(); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("memory not locked: mlockall: %v (systemd: LimitMEMLOCK=infinity)", err))
		} else {
			r.MemoryLocked = true
		}
	}
	return r
}

// lockMemory locks the process's pages in memory as they are first touched
// (MCL_ONFAULT): never paged out afterwards, without the eager population
// of plain MCL_FUTURE, which would make the Go runtime's reserved heap
// arenas resident (a node measured 87 MB resident that way, 10 MB with
// MCL_ONFAULT). Kernels before 4.4 lack MCL_ONFAULT: lock eagerly there.
func lockMemory() error {
	err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE)
	}
	return err
}

func fifoProblem(prio int, err error) string {
	if !errors.Is(err, unix.EPERM) {
		return fmt.Sprintf("not SCHED_FIFO: sched_setattr: %v", err)
	}
	limit := "unknown"
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_RTPRIO, &rl) == nil {
		limit = strconv.FormatUint(rl.Cur, 10)
	}
	why := fmt.Sprintf("not SCHED_FIFO priority %d: not permitted: it needs CAP_SYS_NICE or RLIMIT_RTPRIO ≥ %d (RLIMIT_RTPRIO is %s)", prio, prio, limit)
	if hasCap(capSysNice) {
		// Permitted by capability yet refused: the cgroup has no
		// real-time budget (CONFIG_RT_GROUP_SCHED).
		why += "; the process has CAP_SYS_NICE, so its cgroup has no real-time runtime (cpu.rt_runtime_us)"
	}
	return why + "; in the systemd unit: LimitRTPRIO=99 or AmbientCapabilities=CAP_SYS_NICE"
}

// memlockBlocked says why locking all memory is not attempted, or "" when
// it is safe. MCL_FUTURE under a finite RLIMIT_MEMLOCK would make a later
// heap growth of the Go runtime fail once the limit is reached (a fatal
// "out of memory"), so a finite limit without CAP_IPC_LOCK is refused up
// front.
func memlockBlocked() string {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return fmt.Sprintf("memory not locked: reading RLIMIT_MEMLOCK: %v", err)
	}
	if rl.Cur == unix.RLIM_INFINITY || hasCap(capIPCLock) {
		return ""
	}
	return fmt.Sprintf("memory not locked: RLIMIT_MEMLOCK is %d KiB and the process lacks CAP_IPC_LOCK, so locking the Go heap as it grows would fail; in the systemd unit: LimitMEMLOCK=infinity", rl.Cur/1024)
}

// hasCap reports whether the process's effective capabilities include bit.
func hasCap(bit uint) bool {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<bit) != 0
		}
	}
	return false
}

// Waiter is an executor.Waiter that sleeps in the kernel (ppoll on an
// eventfd) on the calling thread: the kernel's high-resolution timer wakes
// the real-time thread itself, with no timer slack for a SCHED_FIFO thread,
// and Wake writes the eventfd.
//
// The ppoll is an ordinary system call, during which the Go scheduler may
// give the goroutine's processor (P) to other goroutines; back from it, the
// loop may wait for a P behind busy goroutines of its own process. A raw
// system call that keeps the P was measured and is worse under every load:
// the runtime takes the P back anyway (sysmon every 10 ms, the collector
// several times a cycle), and a locked goroutine regains it only through
// another, ordinary-priority thread (docs/performance.md, "Real-time loop
// jitter").
//
// Wake may be called from any goroutine at any time, also after Close: the
// executor's other goroutines post work whenever they like, and a write to
// a closed descriptor number would land in whatever file the process opens
// next under that number.
type Waiter struct {
	fd  int
	buf [8]byte

	mu     sync.RWMutex // held shared by Wake, exclusively by Close
	closed bool
}

// NewWaiter returns a Waiter; Close releases its file descriptor.
func NewWaiter() (*Waiter, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("rt: eventfd: %w", err)
	}
	return &Waiter{fd: fd}, nil
}

// Wait implements executor.Waiter. A signal delivered to the thread (the Go
// runtime's preemption signal, a profiler's, a child's exit) interrupts
// ppoll with EINTR: Wait then sleeps again for what is left, since
// returning early would leave the executor polling the clock, at real-time
// priority, until a deadline that may be minutes away.
func (w *Waiter) Wait(d time.Duration) {
	if d <= 0 {
		return
	}
	end := time.Now().Add(d)
	fds := [1]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		ts := unix.NsecToTimespec(int64(d))
		n, err := unix.Ppoll(fds[:], &ts, nil)
		if n > 0 {
			_, _ = unix.Read(w.fd, w.buf[:]) // consume the wake-up
			return
		}
		if !errors.Is(err, unix.EINTR) {
			return // the deadline, or a failure the executor's polling covers
		}
		if d = time.Until(end); d <= 0 {
			return
		}
	}
}

// Wake implements executor.Waiter.
// After Close it does nothing.
func (w *Waiter) Wake() {
	one := [8]byte{1}
	w.mu.RLock()
	if !w.closed {
		_, _ = unix.Write(w.fd, one[:]) // non-blocking: never waits under the lock
	}
	w.mu.RUnlock()
}

// Close releases the Waiter's eventfd once no Wake is writing to it; later
// Wakes do nothing and later Closes return nil. Close only after the
// executor using the Waiter has returned from Run: a Wait in progress
// would go on polling a descriptor number that is no longer the Waiter's.
func (w *Waiter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return unix.Close(w.fd)
}
