package arms

import "github.com/saint-os/saint/roles/motor"

// Follow is follow, for the tests of the arms_test package.
func (a *Arms) Follow() []motor.Output { return a.follow() }

// Write is write, for the tests of the arms_test package.
func (a *Arms) Write(out []motor.Output) { a.write(out) }

// Control is control, for the tests of the arms_test package.
func (a *Arms) Control() { a.control() }

// Poll is poll, for the tests of the arms_test package.
func (a *Arms) Poll() { a.poll() }

// Polling says whether a poll of the servos is on the bus.
func (a *Arms) Polling() bool { return a.polling > 0 }
