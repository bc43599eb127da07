package gpio

import "time"

// Level is a digital level.
type Level bool

const (
	Low  Level = false
	High Level = true
)

func (l Level) String() string {
	if l {
		return "high"
	}
	return "low"
}

// Pull is an input's pull resistor.
type Pull int

const (
	PullNoChange Pull = iota
	Float
	PullDown
	PullUp
)

// Edge selects which transitions an input reports.
type Edge int

const (
	NoEdge Edge = iota
	RisingEdge
	FallingEdge
	BothEdges
)

// EdgeEvent is one transition of an input, stamped with when it happened
// (kernel timestamp on a Pi, virtual time in the simulator) so decoders
// measure pulse widths from the stamps, not from when they ran.
type EdgeEvent struct {
	Level Level // level after the edge
	Time  time.Time
}

// PinIO is a general purpose pin. Pins are named by their BCM number.
type PinIO interface {
	// Name returns the BCM name, "GPIO17".
	Name() string
	// Number returns the BCM number, 17.
	Number() int
	// In sets the pin as an input with the given pull and edge detection.
	In(pull Pull, edge Edge) error
	// Read returns the current level.
	Read() Level
	// Out sets the pin as an output driving l.
	Out(l Level) error
}

// EdgeWatcher is a pin that reports timestamped edges as they happen.
type EdgeWatcher interface {
	// WatchEdges calls f for each edge selected by In. f may be called on
	// any goroutine and must not block: code on an executor posts the event
	// into it. stop ends the watch.
	WatchEdges(f func(EdgeEvent)) (stop func())
}
