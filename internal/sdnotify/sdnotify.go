package sdnotify

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// Environment variables systemd sets for a service (systemd.exec(5)).
const (
	envSocket       = "NOTIFY_SOCKET"
	envWatchdogUSec = "WATCHDOG_USEC"
	envWatchdogPID  = "WATCHDOG_PID"
)

// Notifications (sd_notify(3)).
const (
	stateReady    = "READY=1"
	stateWatchdog = "WATCHDOG=1"
	stateStopping = "STOPPING=1"
)

const (
	// watchdogDivisor: a ping every quarter of the watchdog time.
	watchdogDivisor = 4
	minWatchdogPing = time.Millisecond
	// maxDatagramBytes bounds a notification; systemd reads at most a
	// page's worth per datagram.
	maxDatagramBytes = 4096
)

// ErrUnsupported is returned by New on a system without AF_UNIX datagram
// sockets to systemd (anything but Linux).
var ErrUnsupported = errors.New("sdnotify: not supported on this system")

// FromEnv returns a notifier for the socket in $NOTIFY_SOCKET, read with
// getenv (os.Getenv in a command), or nil and no error when the variable
// is unset: the process does not run under systemd, or its unit is not
// Type=notify.
func FromEnv(getenv func(string) string) (*Notifier, error) {
	socket := getenv(envSocket)
	if socket == "" {
		return nil, nil
	}
	return New(socket)
}

// WatchdogTime is the unit's WatchdogSec= as systemd passes it
// ($WATCHDOG_USEC), and whether the watchdog is on for this process:
// $WATCHDOG_PID, when set, must be pid (so that a child that inherited the
// environment does not think it is watched). A malformed value is an
// error naming the variable.
func WatchdogTime(getenv func(string) string, pid int) (time.Duration, bool, error) {
	usec := getenv(envWatchdogUSec)
	if usec == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(usec, 10, 63)
	if err != nil || n == 0 {
		return 0, false, fmt.Errorf("sdnotify: $%s=%q: want a positive number of microseconds", envWatchdogUSec, usec)
	}
	if p := getenv(envWatchdogPID); p != "" {
		want, err := strconv.Atoi(p)
		if err != nil {
			return 0, false, fmt.Errorf("sdnotify: $%s=%q: want a process id", envWatchdogPID, p)
		}
		if want != pid {
			return 0, false, nil
		}
	}
	return time.Duration(n) * time.Microsecond, true, nil
}

// PingPeriod is how often to send WATCHDOG=1 for a watchdog time of
// watchdog: a quarter of it, so that a ping delayed by a busy moment, or a
// dropped one, still leaves systemd another in time.
func PingPeriod(watchdog time.Duration) time.Duration {
	return max(watchdog/watchdogDivisor, minWatchdogPing)
}

// Ready tells systemd the service is up (READY=1).
func (n *Notifier) Ready() error { return n.Notify(stateReady) }

// Watchdog pings the service watchdog (WATCHDOG=1).
func (n *Notifier) Watchdog() error { return n.Notify(stateWatchdog) }

// Stopping tells systemd the service is shutting down (STOPPING=1).
func (n *Notifier) Stopping() error { return n.Notify(stateStopping) }

// Notify sends state, one or more newline-separated KEY=VALUE assignments
// (sd_notify(3)), in one datagram. It never blocks: a datagram systemd's
// socket has no room for is an error wrapping ErrDropped.
func (n *Notifier) Notify(state string) error {
	if len(state) > maxDatagramBytes {
		return fmt.Errorf("sdnotify: a notification of %d bytes is over %d", len(state), maxDatagramBytes)
	}
	return n.send([]byte(state))
}

// ErrDropped is wrapped by Notify's error when the socket's queue was full.
var ErrDropped = errors.New("sdnotify: systemd's socket is full; notification dropped")

// SetWatchdogTime changes the service's watchdog time until the next
// change or restart (WATCHDOG_USEC=, systemd 236 and later): for a stretch
// the loop cannot ping through. saint-node allows its next firmware image
// time to boot before it execs it; the image sets the unit's time again
// once its executor runs (Pet).
func (n *Notifier) SetWatchdogTime(d time.Duration) error {
	return n.Notify("WATCHDOG_USEC=" + strconv.FormatInt(d.Microseconds(), 10))
}

// Pet sends READY=1 as the next callback on ex and then WATCHDOG=1 every
// PingPeriod(watchdog) from a timer on ex, so that systemd hears the
// executor's own loop: a callback that stalls it stops the pings. Right
// after READY=1 it pings once and sets the watchdog time to watchdog (the
// unit's WatchdogSec=, undoing a SetWatchdogTime before an exec). watchdog
// 0 sends READY=1 only (no WatchdogSec= in the unit). A failed send is
// logged when it starts failing and when it works again, not every period.
// The returned timer (nil for watchdog 0) stops the pings.
func Pet(ex *executor.Executor, n *Notifier, watchdog time.Duration, log *slog.Logger) *executor.Timer {
	if log == nil {
		log = slog.Default()
	}
	p := &petter{n: n, log: log}
	ex.Post(func() {
		p.send(stateReady)
		if watchdog > 0 {
			p.send(stateWatchdog + "\nWATCHDOG_USEC=" + strconv.FormatInt(watchdog.Microseconds(), 10))
		}
	})
	if watchdog <= 0 {
		return nil
	}
	return ex.Every(PingPeriod(watchdog), func() { p.send(stateWatchdog) })
}

// petter remembers whether the last notification failed, so a socket that
// stays broken is logged once.
type petter struct {
	n      *Notifier
	log    *slog.Logger
	failed bool
}

func (p *petter) send(state string) {
	err := p.n.Notify(state)
	switch {
	case err != nil && !p.failed:
		p.failed = true
		p.log.Warn("systemd notification failed", "state", state, "err", err)
	case err == nil && p.failed:
		p.failed = false
		p.log.Info("systemd notifications work again", "state", state)
	}
}

// Service is what a command under systemd does at start, in one call:
// FromEnv, then Start.
func Service(ex *executor.Executor, getenv func(string) string, pid int, log *slog.Logger) (stop func(), err error) {
	n, err := FromEnv(getenv)
	if err != nil {
		return func() {}, err
	}
	return n.Start(ex, getenv, pid, log)
}

// Start sends READY=1 from ex's loop and, when the unit has WatchdogSec=
// for this process ($WATCHDOG_USEC, $WATCHDOG_PID), pings from ex's loop
// (Pet). getenv is os.Getenv and pid os.Getpid() in a command. The
// returned stop (never nil) sends STOPPING=1 and closes the socket: call it
// when ex has stopped. A nil notifier (no $NOTIFY_SOCKET) does nothing.
func (n *Notifier) Start(ex *executor.Executor, getenv func(string) string, pid int, log *slog.Logger) (stop func(), err error) {
	if n == nil {
		return func() {}, nil
	}
	if log == nil {
		log = slog.Default()
	}
	watchdog, on, err := WatchdogTime(getenv, pid)
	if err != nil {
		n.Close()
		return func() {}, err
	}
	if on {
		log.Info("systemd watchdog: pinged from the executor's loop", "watchdog", watchdog, "every", PingPeriod(watchdog))
	} else {
		watchdog = 0
	}
	t := Pet(ex, n, watchdog, log)
	return func() {
		if t != nil {
			t.Stop()
		}
		_ = n.Stopping()
		n.Close()
	}, nil
}
