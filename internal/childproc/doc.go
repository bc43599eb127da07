// Package childproc starts the project's child processes so that none
// outlives the process that started it, and lets such a child tell when
// that process is gone.
//
// The parent's side is Start (and Run, which stops the child when a
// context ends). On Linux the child
//
//   - is asked to receive SIGTERM when its parent dies (PR_SET_PDEATHSIG),
//     however the parent ends: an exit, a panic, SIGKILL, the OOM killer.
//     The kernel ties that signal to the thread that forked the child, not
//     to the process (golang/go#27505), so Start forks from a goroutine
//     locked to its OS thread and keeps it locked until the child has been
//     reaped: no thread the Go runtime ends can signal a live child;
//   - runs in a process group of its own, so that stopping it (Process.Stop)
//     reaches whatever it started in turn, and a terminal's Ctrl-C goes to
//     the parent, which stops its children in order;
//   - finds the parent's process id in $SAINT_PARENT_PID.
//
// The child's side is Bind. A program started with Start calls it first:
// it refuses to run when its parent is already gone (the parent may die
// between the fork and PR_SET_PDEATHSIG taking effect, after which the
// child is someone else's), and returns a context that ends when the parent
// is gone (its parent process id changes) or when the link to the parent's
// bus has been down for longer than LinkGrace. A child that lost its parent
// must not go on presenting the robot (saint-ros2 advertising it on DDS,
// saint-viz drawing it), and a shutdown that hangs is cut short: the
// process exits ExitGrace after its parent went. Without $SAINT_PARENT_PID
// (a command started by hand, or by systemd on the robot, where the units'
// BindsTo= does this work) Bind changes nothing.
package childproc
