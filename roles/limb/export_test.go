package limb

// Control is control, for the tests of the limb_test package.
func (l *Limb) Control() { l.control() }
