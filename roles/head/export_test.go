package head

// Control is control, for the tests of the head_test package.
func (h *Head) Control(dt float64) { h.control(dt) }
