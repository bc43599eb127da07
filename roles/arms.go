package roles

// Arms is the arms role (instance left or right).
type Arms struct{ basic }

// Start implements Role.
func (a *Arms) Start(env Env) error { return a.start(env) }

// Stop implements Role.
func (a *Arms) Stop() { a.stop() }
