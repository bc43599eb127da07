package uart

import "time"

// Parity of a serial line.
type Parity int

const (
	NoParity Parity = iota
	EvenParity
	OddParity
)

// Config is a serial line's settings. SBUS is 100000 baud 8E2 inverted,
// CRSF 420000 8N1, IBUS 115200 8N1.
type Config struct {
	Baud     int
	DataBits int // 0 means 8
	Parity   Parity
	StopBits int // 0 means 1
	Inverted bool
}

// Port is a UART.
type Port interface {
	// Configure applies c.
	Configure(c Config) error
	// Write sends p.
	Write(p []byte) (int, error)
	// Receive calls fn with bytes as they arrive, stamped with their arrival
	// time (protocol decoders use the gaps between bursts to find frames).
	// fn may run on any goroutine and must not block. stop ends it.
	Receive(fn func(p []byte, at time.Time)) (stop func())
}
