//go:build !linux

package childproc

import (
	"os"
	"syscall"
)

// sysProcAttr: outside Linux there is no parent-death signal; the child
// relies on Bind's watch of its parent.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup signals the child only.
func signalGroup(p *os.Process, sig syscall.Signal) error { return p.Signal(sig) }
