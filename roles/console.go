package roles

// Console is the console role: display and buttons.
type Console struct{ basic }

// Start implements Role.
func (c *Console) Start(env Env) error { return c.start(env) }

// Stop implements Role.
func (c *Console) Stop() { c.stop() }
