package roles

// basic is the part every role shares: it claims and opens the pins of the
// role's gpio_mapping (actuators at their safe value) and gives them back
// on Stop.
type basic struct {
	env  Env
	pins *pins
}

func (b *basic) start(env Env) error {
	p, err := claimPins(env.Board, env.Config)
	if err != nil {
		return err
	}
	b.env, b.pins = env, p
	return nil
}

func (b *basic) stop() {
	if b.pins != nil {
		b.pins.release()
		b.pins = nil
	}
}

// Arms is the arms role (instance left or right).
type Arms struct{ basic }

// Start implements Role.
func (a *Arms) Start(env Env) error { return a.start(env) }

// Stop implements Role.
func (a *Arms) Stop() { a.stop() }

// Tracks is the tracks role: differential drive and odometry.
type Tracks struct{ basic }

// Start implements Role.
func (t *Tracks) Start(env Env) error { return t.start(env) }

// Stop implements Role.
func (t *Tracks) Stop() { t.stop() }

// Console is the console role: display and buttons.
type Console struct{ basic }

// Start implements Role.
func (c *Console) Start(env Env) error { return c.start(env) }

// Stop implements Role.
func (c *Console) Stop() { c.stop() }

// Balance is the self-balancing base role (saul-tee).
type Balance struct{ basic }

// Start implements Role.
func (b *Balance) Start(env Env) error { return b.start(env) }

// Stop implements Role.
func (b *Balance) Stop() { b.stop() }
