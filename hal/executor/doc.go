// Package executor is the event loop every SAINT.OS process runs its logic
// on: one goroutine runs timer callbacks and message callbacks one at a time,
// taking time from an injected clock.Clock.
//
// On a robot the clock is the wall clock. In the simulator it is a
// clock.Virtual that the executor moves from one timer deadline to the next,
// either as fast as the CPU allows (Speed 0: tests and CI regression, where a
// minute of robot time takes milliseconds) or paced to the wall clock
// (Speed 1: the interactive simulator). Physics steps, role control loops,
// bus deliveries and the router's tick are all events on the same loop, so a
// simulated robot is deterministic.
//
// Blocking I/O does not run on the executor. Goroutines at the edges (socket
// readers, UART readers, HTTP handlers) hand their results in with Post, or
// wait for a result with Do.
//
// A timer firing allocates nothing, and thousands of periodic timers cost a
// heap sift each per run. For a control loop on the wall clock,
// Options.Waiter (hal/rt's kernel waiter on a real-time thread) and
// Options.Spin make deadlines punctual to microseconds; without them the
// loop waits on Go timers, which wake it tens to hundreds of microseconds
// late.
package executor
