package tracks

// Control is control, for the tests of the tracks_test package.
func (t *Tracks) Control() { t.control() }
