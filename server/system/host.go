package system

import (
	"time"

	"github.com/saint-os/saint/hal/board/linuxhost"
	"github.com/saint-os/saint/hal/executor"
)

// Host is the server machine as the dashboard shows it: its health and its
// addresses on the internal (nodes) and external (Wi-Fi) networks.
type Host interface {
	Sample() linuxhost.Metrics
	Addresses() (internal, external string)
}

// localHost is Host for the machine the server runs on.
type localHost struct{ sampler *linuxhost.Sampler }

func (h localHost) Sample() linuxhost.Metrics { return h.sampler.Sample() }

func (h localHost) Addresses() (string, string) {
	return linuxhost.Addresses(linuxhost.Interfaces())
}

// hostSample is what the system status reports of the machine.
type hostSample struct {
	metrics            linuxhost.Metrics
	internal, external string
}

// hostSampleEvery is how often the machine is sampled. CPU use is averaged
// over this window, as top does over its refresh interval.
const hostSampleEvery = 2 * time.Second

// hostMonitor samples the machine on the executor, so the system status
// reads a recent sample without touching /proc on every request.
type hostMonitor struct {
	ex     *executor.Executor
	host   Host
	timer  *executor.Timer
	latest *hostSample
}

// Start implements Component; it runs on the executor.
func (m *hostMonitor) Start() error {
	m.sample()
	m.timer = m.ex.Every(hostSampleEvery, m.sample)
	return nil
}

// Stop implements Component.
func (m *hostMonitor) Stop() {
	if m.timer != nil {
		m.timer.Stop()
	}
}

func (m *hostMonitor) sample() {
	in, ex := m.host.Addresses()
	*m.latest = hostSample{metrics: m.host.Sample(), internal: in, external: ex}
}
