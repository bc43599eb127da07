package stack

import (
	"time"

	"github.com/saint-os/saint/hal/board/linuxhost"
)

// wallHost is the server's view of the machine (server.Host) in a
// simulation: the server samples it on its own clock, which at --speed 0
// runs a hundred times faster than the machine's, so wallHost reads /proc
// and the interfaces at most once per every of wall time and repeats that
// sample in between. CPU use is then averaged over a window of seconds, as
// on a robot, instead of milliseconds. It is used on the server's executor.
type wallHost struct {
	every   time.Duration
	sampler *linuxhost.Sampler
	now     func() time.Time // the wall clock

	last    time.Time
	metrics linuxhost.Metrics
	in, ex  string
}

func newWallHost(every time.Duration) *wallHost {
	return &wallHost{every: every, sampler: linuxhost.NewSampler(nil, nil), now: time.Now}
}

func (h *wallHost) refresh() {
	now := h.now()
	if !h.last.IsZero() && now.Sub(h.last) < h.every {
		return
	}
	h.last = now
	h.metrics = h.sampler.Sample()
	h.in, h.ex = linuxhost.Addresses(linuxhost.Interfaces())
}

// Sample implements server.Host.
func (h *wallHost) Sample() linuxhost.Metrics {
	h.refresh()
	return h.metrics
}

// Addresses implements server.Host.
func (h *wallHost) Addresses() (internal, external string) {
	h.refresh()
	return h.in, h.ex
}
