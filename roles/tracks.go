package roles

// Tracks is the tracks role: differential drive and odometry.
type Tracks struct{ basic }

// Start implements Role.
func (t *Tracks) Start(env Env) error { return t.start(env) }

// Stop implements Role.
func (t *Tracks) Stop() { t.stop() }
