package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/saint-os/saint/server/inputs/livelink"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// LiveLinkOptions places the LiveLink receiver's listeners. As with the
// server's other addresses, the zero value opens none: the receiver runs
// when Host or one of the addresses is set.
//
// Host ("0.0.0.0" on a robot) opens all three listeners there, on the
// ports of the settings (livelink.data_port, livelink.discovery_port) and
// Live Link Face's 11111; a port that is taken then only logs a warning,
// and the robot runs on without LiveLink. An address given here (tests
// use "127.0.0.1:0") overrides its listener and is binding: if it cannot
// be opened, Start fails.
type LiveLinkOptions struct {
	Host string
	// FaceAddr (UDP), DataAddr (TCP) and DiscoveryAddr (UDP).
	FaceAddr, DataAddr, DiscoveryAddr string
	// AnnounceTo overrides where discovery announcements go (default the
	// multicast group livelink.DiscoveryGroup on the discovery port).
	AnnounceTo []string
	// StaleAfter overrides how long a silent subject stays fresh (1 s).
	StaleAfter time.Duration
}

// liveLink is the server's LiveLink receiver as a Component: it follows
// the livelink settings, restarting on new ports, and keeps one registry
// for the router across restarts.
type liveLink struct {
	s        *Server
	o        LiveLinkOptions
	registry *livelink.Registry
	// On the executor:
	rx      *livelink.Receiver
	applied settings.LiveLink
	err     error
	started bool
}

func (s *Server) newLiveLink() *liveLink {
	o := s.o.LiveLink
	stale := o.StaleAfter
	if stale <= 0 {
		stale = time.Second
	}
	l := &liveLink{s: s, o: o, registry: livelink.NewRegistry(stale, 5*time.Minute, 256)}
	s.settings.Watch(func(n settings.Settings) {
		s.ex.Post(func() {
			if l.started && n.LiveLink != l.applied {
				l.restart(n.LiveLink)
			}
		})
	})
	s.gateway.Handle("livelink", "get_status", l.getStatus)
	return l
}

// ConfigureLiveLink replaces the LiveLink options the server was made
// with (for assemblies that build the server themselves, such as the
// simulator's stack). Call it before Start.
func (s *Server) ConfigureLiveLink(o LiveLinkOptions) {
	s.liveLink.o = o
	if o.StaleAfter > 0 {
		s.liveLink.registry.SetStaleAfter(o.StaleAfter)
	}
}

// explicit reports whether the addresses were given by the caller.
func (l *liveLink) explicit() bool {
	return l.o.FaceAddr != "" || l.o.DataAddr != "" || l.o.DiscoveryAddr != ""
}

// Start opens the receiver (executor).
func (l *liveLink) Start() error {
	l.started = true
	err := l.open(l.s.settings.Get().LiveLink)
	if err != nil && !l.explicit() {
		l.s.log.Warn("LiveLink receiver not started", "source", "livelink", "err", err)
		return nil
	}
	return err
}

// Stop closes the receiver (executor).
func (l *liveLink) Stop() {
	l.started = false
	if l.rx != nil {
		l.rx.Stop()
		l.rx = nil
	}
}

func (l *liveLink) restart(n settings.LiveLink) {
	if l.rx != nil {
		l.rx.Stop()
		l.rx = nil
	}
	if err := l.open(n); err != nil {
		l.s.log.Warn("LiveLink receiver not restarted", "source", "livelink", "err", err)
	}
}

func (l *liveLink) open(n settings.LiveLink) error {
	l.applied, l.err = n, nil
	if !n.Enabled || l.o.Host == "" && !l.explicit() {
		return nil
	}
	or := func(a string, port int) string {
		if a != "" || l.o.Host == "" {
			return a
		}
		return net.JoinHostPort(l.o.Host, strconv.Itoa(port))
	}
	rx, err := livelink.New(livelink.Options{
		Exec: l.s.ex, Bus: l.s.o.Bus, Log: l.s.log,
		FaceAddr:      or(l.o.FaceAddr, livelink.DefaultFacePort),
		DataAddr:      or(l.o.DataAddr, n.DataPort),
		DiscoveryAddr: or(l.o.DiscoveryAddr, n.DiscoveryPort),
		Name:          n.BroadcastName,
		AnnounceTo:    l.o.AnnounceTo,
		StaleAfter:    l.o.StaleAfter,
		Registry:      l.registry,
	})
	if err == nil {
		err = rx.Start()
	}
	if err != nil {
		l.err = err
		return err
	}
	l.rx = rx
	return nil
}

// LiveLinkAddrs returns the LiveLink receiver's bound addresses (empty
// when it is off).
func (s *Server) LiveLinkAddrs() livelink.Addrs {
	var a livelink.Addrs
	_ = s.ex.Do(context.Background(), func() {
		if s.liveLink != nil && s.liveLink.rx != nil {
			a = s.liveLink.rx.Addrs()
		}
	})
	return a
}

// liveLinkStatus is livelink get_status' answer.
type liveLinkStatus struct {
	Enabled  bool                     `json:"enabled"`
	Error    string                   `json:"error,omitempty"`
	Face     string                   `json:"face_udp"`
	Data     string                   `json:"data_tcp"`
	Disc     string                   `json:"discovery_udp"`
	Stats    livelink.Stats           `json:"stats"`
	Subjects []livelink.SubjectStatus `json:"subjects"`
}

// getStatus answers livelink get_status: listeners, counters and the
// subjects with their staleness.
func (l *liveLink) getStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st liveLinkStatus
	if err := l.s.ex.Do(ctx, func() {
		if l.err != nil {
			st.Error = l.err.Error()
		}
		if l.rx != nil {
			st.Enabled = true
			a := l.rx.Addrs()
			st.Face, st.Data, st.Disc = a.Face, a.Data, a.Discovery
			st.Stats = l.rx.Stats()
		}
	}); err != nil {
		return nil, fmt.Errorf("livelink: %w", err)
	}
	st.Subjects = l.registry.Status()
	return st, nil
}
