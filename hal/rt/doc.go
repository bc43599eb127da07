// Package rt puts the calling goroutine's control loop in real-time mode:
// locked to one OS thread, scheduled SCHED_FIFO above ordinary processes,
// pinned to a CPU, with the process's memory locked so that no page fault
// stalls it.
//
// Each step is taken when the process is permitted to and reported when not:
// Enter never fails, it returns a Report whose Warning names the missing
// permission (CAP_SYS_NICE, RLIMIT_RTPRIO, RLIMIT_MEMLOCK) and the systemd
// unit settings that grant it. A robot whose loop runs without real-time
// priority still runs; it only jitters more.
//
// The loop's executor then waits for its deadlines in a Waiter (ppoll on an
// eventfd, on the loop's own thread, so the kernel's timer wakes the
// real-time thread directly) and polls the clock for the last Spin before
// each deadline; saint-node --rt sets both. Package rt/jitter measures what
// that gives on the machine at hand.
//
// Only Linux implements it; elsewhere Enter locks the thread and reports
// that nothing else is available, and NewWaiter fails.
package rt
