package childproc

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in a process group of its own and asks the
// kernel to send it SIGTERM when the thread that forked it ends (Start
// holds that thread for the child's life). Go's fork code checks, after
// PR_SET_PDEATHSIG, that the parent is still there, and signals the child
// at once if it is not.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}
