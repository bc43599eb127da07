package heartbeat

import (
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/feature"
)

// Register adds the heartbeat to h: it starts with the server's
// components and stops with them, so a server shutting down is seen by the
// nodes as a lost link too.
func Register(h *feature.Host) {
	var (
		timer *executor.Timer
		seq   uint64
	)
	beat := func() {
		seq++
		if err := h.Bus.Publish(msg.TopicServerHeartbeat, msg.ServerHeartbeat{Seq: seq, Stamp: msg.TimeOf(h.Exec.Now())}); err != nil {
			h.Log.Debug("heartbeat", "err", err)
		}
	}
	h.Add(feature.Funcs{
		OnStart: func() error {
			beat()
			timer = h.Exec.Every(msg.HeartbeatInterval, beat)
			return nil
		},
		OnStop: func() {
			if timer != nil {
				timer.Stop()
				timer = nil
			}
		},
	})
}
