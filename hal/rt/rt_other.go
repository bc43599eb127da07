//go:build !linux

package rt

import (
	"errors"
	"runtime"
	"time"
)

// DefaultCPU returns -1: pinning is only implemented on Linux.
func DefaultCPU() int { return -1 }

// Enter locks the calling goroutine to its OS thread; real-time scheduling,
// pinning and memory locking are Linux only.
func Enter(o Options) Report {
	runtime.LockOSThread()
	return Report{ThreadLocked: true, CPU: -1, Problems: []string{"real-time scheduling is only implemented on Linux"}}
}

// Waiter is the Linux kernel waiter; elsewhere NewWaiter fails.
type Waiter struct{}

// NewWaiter fails: only Linux has one.
func NewWaiter() (*Waiter, error) { return nil, errors.New("rt: no kernel waiter on this OS") }

// Wait does nothing.
func (*Waiter) Wait(time.Duration) {}

// Wake does nothing.
func (*Waiter) Wake() {}

// Close does nothing.
func (*Waiter) Close() error { return nil }
