package pi

import (
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/linuxhost"
)

// SystemMetrics are the node's metrics with the extras board.Metrics has no
// room for (load, uptime, memory and disk sizes).
type SystemMetrics = linuxhost.Metrics

// Metrics implements board.Board.
func (b *Board) Metrics() board.Metrics { return b.SystemMetrics().Metrics }

// SystemMetrics reads every metric the board offers. CPU use is measured
// since the previous call.
func (b *Board) SystemMetrics() SystemMetrics { return b.host.Sample() }
