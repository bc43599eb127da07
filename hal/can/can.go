package can

import "time"

// Frame is a classic CAN frame, standard (11-bit) or extended (29-bit) id.
type Frame struct {
	ID       uint32
	Extended bool
	Remote   bool
	Length   uint8 // 0–8
	Data     [8]byte
}

// Bus is a CAN interface.
type Bus interface {
	// Send transmits f.
	Send(f Frame) error
	// Receive calls fn with every frame seen on the bus and when it was
	// received. fn may run on any goroutine and must not block. stop ends it.
	Receive(fn func(f Frame, at time.Time)) (stop func())
}
