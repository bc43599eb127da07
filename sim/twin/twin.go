package twin

import (
	"fmt"
	"sort"
	"sync"

	"github.com/saint-os/saint/hal/i2c"
)

// I2C is a chip on an I²C bus, seen from the chip: the bus has already
// matched its address. Tx receives the bytes the controller wrote and fills r
// with what it reads back, as one transaction with a repeated start; either
// may be empty. Returning an error models the chip not acknowledging.
//
// A twin must be safe for concurrent use: the physics updates it while a
// driver reads it.
type I2C interface {
	Tx(w, r []byte) error
}

// GeneralCaller is a twin that answers the I²C general call (address 0x00),
// as the PCA9685 does for its software reset.
type GeneralCaller interface {
	// GeneralCall receives the bytes written to address 0x00.
	GeneralCall(w []byte)
}

// I2CBus is an I²C bus of twins. It implements i2c.Bus: a transaction to an
// address with a connected twin goes to it, any other address is not
// acknowledged. Transactions are serialised, as on a real bus.
//
// The zero value is an empty bus (name "i2c"). Methods are safe for
// concurrent use.
type I2CBus struct {
	// Name is used in errors, "i2c-1".
	Name string

	mu   sync.Mutex
	devs map[uint16]*attached
}

type attached struct {
	dev       I2C
	connected bool
}

// Attach puts dev on the bus at the 7-bit address addr, connected. It panics
// if addr is not a 7-bit address or already taken: both are wiring mistakes
// in the simulator, not conditions to handle.
func (b *I2CBus) Attach(addr uint16, dev I2C) {
	if addr > 0x7F {
		panic(fmt.Sprintf("twin: I²C address %#x is not 7-bit", addr))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.devs == nil {
		b.devs = map[uint16]*attached{}
	}
	if _, ok := b.devs[addr]; ok {
		panic(fmt.Sprintf("twin: two devices at I²C address %#02x", addr))
	}
	b.devs[addr] = &attached{dev: dev, connected: true}
}

// Connect plugs (true) or unplugs (false) the twin at addr without forgetting
// it, to simulate a loose cable or a dead chip. It reports whether there is a
// twin at addr.
func (b *I2CBus) Connect(addr uint16, connected bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.devs[addr]
	if ok {
		a.connected = connected
	}
	return ok
}

// Device returns the twin attached at addr, connected or not.
func (b *I2CBus) Device(addr uint16) (I2C, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.devs[addr]
	if !ok {
		return nil, false
	}
	return a.dev, true
}

// Addrs returns the addresses that have a twin attached, ascending.
func (b *I2CBus) Addrs() []uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]uint16, 0, len(b.devs))
	for a := range b.devs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Tx implements i2c.Bus.
func (b *I2CBus) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if addr == 0 {
		return b.generalCall(w, r)
	}
	a, ok := b.devs[addr]
	if !ok || !a.connected {
		return &NACKError{Bus: b.name(), Addr: addr}
	}
	if err := a.dev.Tx(w, r); err != nil {
		return fmt.Errorf("%s: 0x%02x: %w", b.name(), addr, err)
	}
	return nil
}

// generalCall delivers a write to address 0x00 to every connected twin that
// answers it, in address order; it is acknowledged if one does. The general
// call cannot read. b.mu must be held.
func (b *I2CBus) generalCall(w, r []byte) error {
	addrs := make([]uint16, 0, len(b.devs))
	for a := range b.devs {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	acked := false
	for _, a := range addrs {
		if gc, ok := b.devs[a].dev.(GeneralCaller); ok && b.devs[a].connected && len(r) == 0 && len(w) > 0 {
			gc.GeneralCall(w)
			acked = true
		}
	}
	if !acked {
		return &NACKError{Bus: b.name(), Addr: 0}
	}
	return nil
}

func (b *I2CBus) name() string {
	if b.Name == "" {
		return "i2c"
	}
	return b.Name
}

// NACKError is returned for a transaction that no device acknowledged.
type NACKError struct {
	Bus  string
	Addr uint16
}

func (e *NACKError) Error() string {
	return fmt.Sprintf("%s: no device acknowledged address 0x%02x", e.Bus, e.Addr)
}

var _ i2c.Bus = (*I2CBus)(nil)
