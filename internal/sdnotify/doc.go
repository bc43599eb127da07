// Package sdnotify speaks systemd's service notification protocol
// (sd_notify(3)): a datagram of newline-separated KEY=VALUE assignments
// sent to the AF_UNIX socket named by $NOTIFY_SOCKET. A path starting with
// '@' is an abstract socket name (the '@' stands for the leading NUL).
//
// A Type=notify service sends READY=1 once it is up; with WatchdogSec= in
// its unit it must then send WATCHDOG=1 at least every $WATCHDOG_USEC
// microseconds or systemd kills it (WatchdogSignal=, SIGABRT by default)
// and, with Restart=, starts it again. Pet arms both on an executor: the
// pings are a timer callback of the loop they vouch for, so a loop stalled
// in a callback (a deadlock, a blocking call, a SIGSTOP) stops them and is
// caught, where a goroutine of its own would keep pinging for a dead loop.
// SetWatchdogTime (WATCHDOG_USEC=) changes the watchdog time for a stretch
// the loop cannot ping through, such as saint-node's exec of a new
// firmware image; Pet's first ping sets the unit's time again.
//
// The protocol, written here in a few lines of pure Go instead of linking
// libsystemd, is documented in sd_notify(3) and systemd.service(5)
// (WatchdogSec=, NotifyAccess=). Sends never block: a ping systemd's full
// socket cannot take is dropped, and the next one, a fraction of the
// watchdog time later, goes instead. On systems without systemd (no
// $NOTIFY_SOCKET) FromEnv returns no notifier and nothing is sent.
package sdnotify
