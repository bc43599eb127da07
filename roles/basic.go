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
