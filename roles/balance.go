package roles

// Balance is the self-balancing base role (saul-tee).
type Balance struct{ basic }

// Start implements Role.
func (b *Balance) Start(env Env) error { return b.start(env) }

// Stop implements Role.
func (b *Balance) Stop() { b.stop() }
