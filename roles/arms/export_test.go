package arms

import "github.com/saint-os/saint/roles/motor"

// Follow is follow, for the tests of the arms_test package.
func (a *Arms) Follow() []motor.Output { return a.follow() }
