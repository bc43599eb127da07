package balance

// Loop is loop, for the tests of the balance_test package.
func (b *Balance) Loop() { b.loop() }
