//go:build !linux

package rt

import "runtime"

// DefaultCPU returns -1: pinning is only implemented on Linux.
func DefaultCPU() int { return -1 }

// Enter locks the calling goroutine to its OS thread; real-time scheduling,
// pinning and memory locking are Linux only.
func Enter(o Options) Report {
	runtime.LockOSThread()
	return Report{ThreadLocked: true, CPU: -1, Problems: []string{"real-time scheduling is only implemented on Linux"}}
}
