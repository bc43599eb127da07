package livelink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// Listeners places the server's LiveLink receiver's listeners. As with the
// server's other addresses, the zero value opens none: the receiver runs
// when Host or one of the addresses is set.
//
// Host ("0.0.0.0" on a robot) opens all three listeners there, on the
// ports of the settings (livelink.data_port, livelink.discovery_port) and
// Live Link Face's 11111; a port that is taken then only logs a warning,
// and the robot runs on without LiveLink. An address given here (tests
// use "127.0.0.1:0") overrides its listener and is binding: if it cannot
// be opened, Start fails.
//
// A host that is not loopback is used only while the livelink.external
// setting is on; off (a fresh install) the listeners open on 127.0.0.1,
// on the same ports, and send no discovery announcements (ListenAddr).
type Listeners struct {
	Host string
	// FaceAddr (UDP), DataAddr (TCP) and DiscoveryAddr (UDP).
	FaceAddr, DataAddr, DiscoveryAddr string
	// AnnounceTo overrides where discovery announcements go (default the
	// multicast group DiscoveryGroup on the discovery port).
	AnnounceTo []string
	// StaleAfter overrides how long a silent subject stays fresh (1 s).
	StaleAfter time.Duration
}

// SenderOptions configures the allow-list of LiveLink senders.
type SenderOptions struct {
	// DataDir keeps the allow-list (SendersFile); "" keeps it in memory.
	DataDir string
	// AllowLoopback admits senders on the server's own machine without
	// listing them: for a server without authentication (the simulator,
	// development), where anything local could drive the robot anyway.
	AllowLoopback bool
}

// Feature is the server's LiveLink receiver as a component: it follows
// the livelink settings, restarting on new ports, and keeps one registry
// for the router across restarts.
type Feature struct {
	h        *feature.Host
	settings *settings.Store
	o        Listeners
	registry *Registry
	senders  *Senders
	// On the executor:
	rx      *Receiver
	applied settings.LiveLink
	err     error
	started bool
}

// Register installs the LiveLink receiver on h: a component that opens
// the listeners o places on the ports of the livelink settings, taking
// frames only from the senders on the allow-list so places, and the
// livelink get_status, list_senders, allow_sender and revoke_sender
// commands. The router reads the subjects from Registry.
//
// An allow-list file that does not decode is moved aside
// (.corrupt-<time>) and logged as an error: the server starts with an
// empty list, which admits nobody.
func Register(h *feature.Host, st *settings.Store, o Listeners, so SenderOptions) *Feature {
	stale := o.StaleAfter
	if stale <= 0 {
		stale = time.Second
	}
	path := ""
	if so.DataDir != "" {
		path = filepath.Join(so.DataDir, SendersFile)
	}
	senders := NewSenders(path, so.AllowLoopback)
	if err := senders.Load(); err != nil {
		moved, merr := persist.MoveAside(path, h.Exec.Now())
		if merr != nil {
			moved = "(not moved: " + merr.Error() + ")"
		}
		h.Log.Error("LiveLink allow-list unreadable: no network sender is admitted until senders are allowed again in the web UI's Inputs page",
			"source", "livelink", "err", err, "moved_to", moved)
	}
	l := &Feature{h: h, settings: st, o: o, senders: senders, registry: NewRegistry(stale, 5*time.Minute, 256)}
	st.Watch(func(n settings.Settings) {
		h.Exec.Post(func() {
			if l.started && n.LiveLink != l.applied {
				l.restart(n.LiveLink)
			}
		})
	})
	h.Gateway.Handle("livelink", "get_status", l.getStatus)
	h.Gateway.Handle("livelink", "list_senders", l.listSenders)
	h.Gateway.Handle("livelink", "allow_sender", l.allowSender)
	h.Gateway.Handle("livelink", "revoke_sender", l.revokeSender)
	h.Add(l)
	return l
}

// Senders returns the allow-list.
func (l *Feature) Senders() *Senders { return l.senders }

// Registry returns the subjects the receiver has seen.
func (l *Feature) Registry() *Registry { return l.registry }

// explicit reports whether the addresses were given by the caller.
func (l *Feature) explicit() bool {
	return l.o.FaceAddr != "" || l.o.DataAddr != "" || l.o.DiscoveryAddr != ""
}

// Start opens the receiver (executor).
func (l *Feature) Start() error {
	l.started = true
	err := l.open(l.settings.Get().LiveLink)
	if err != nil && !l.explicit() {
		l.h.Log.Warn("LiveLink receiver not started", "source", "livelink", "err", err)
		return nil
	}
	return err
}

// Stop closes the receiver (executor).
func (l *Feature) Stop() {
	l.started = false
	if l.rx != nil {
		l.rx.Stop()
		l.rx = nil
	}
}

func (l *Feature) restart(n settings.LiveLink) {
	if l.rx != nil {
		l.rx.Stop()
		l.rx = nil
	}
	if err := l.open(n); err != nil {
		l.h.Log.Warn("LiveLink receiver not restarted", "source", "livelink", "err", err)
	}
}

func (l *Feature) open(n settings.LiveLink) error {
	l.applied, l.err = n, nil
	if !n.Enabled || l.o.Host == "" && !l.explicit() {
		return nil
	}
	if !n.External && !l.loopbackOnly() {
		l.h.Log.Info("LiveLink listens on 127.0.0.1 only: turn on \"Listen on the network\" in the Settings page's LiveLink box for a phone or another machine",
			"source", "livelink", "host", l.o.Host)
	}
	announceTo := l.o.AnnounceTo
	if announceTo == nil && !n.External {
		// Listening on loopback, there is nobody on the network to tell.
		announceTo = []string{}
	}
	or := func(a string, port int) string {
		if a == "" && l.o.Host != "" {
			a = net.JoinHostPort(l.o.Host, strconv.Itoa(port))
		}
		return ListenAddr(a, n.External)
	}
	rx, err := New(Options{
		Exec: l.h.Exec, Bus: l.h.Bus, Log: l.h.Log,
		FaceAddr:      or(l.o.FaceAddr, DefaultFacePort),
		DataAddr:      or(l.o.DataAddr, n.DataPort),
		DiscoveryAddr: or(l.o.DiscoveryAddr, n.DiscoveryPort),
		Name:          n.BroadcastName,
		AnnounceTo:    announceTo,
		StaleAfter:    l.o.StaleAfter,
		Registry:      l.registry,
		Senders:       l.senders,
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

// ListenAddr is where a listener asked for at addr ("host:port") opens:
// addr itself when external listening is on or its host is a loopback
// address, and otherwise the same port on 127.0.0.1, so that only the
// livelink.external setting puts LiveLink on the network. An empty addr
// stays empty (that listener is off).
func ListenAddr(addr string, external bool) string {
	if addr == "" || external {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // net.Listen reports it
	}
	if isLoopbackHost(host) {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOnly reports whether every listener the feature was given is
// on loopback already (the simulator, tests).
func (l *Feature) loopbackOnly() bool {
	for _, a := range []string{l.o.FaceAddr, l.o.DataAddr, l.o.DiscoveryAddr} {
		if a == "" {
			continue
		}
		if h, _, err := net.SplitHostPort(a); err != nil || !isLoopbackHost(h) {
			return false
		}
	}
	return l.o.Host == "" || isLoopbackHost(l.o.Host)
}

// Addrs returns the receiver's bound addresses (empty when it is off).
// Call it from another goroutine than the executor.
func (l *Feature) Addrs() Addrs {
	var a Addrs
	_ = l.h.Do(context.Background(), func() {
		if l.rx != nil {
			a = l.rx.Addrs()
		}
	})
	return a
}

// status is livelink get_status' answer.
type status struct {
	Enabled bool   `json:"enabled"`
	Error   string `json:"error,omitempty"`
	Face    string `json:"face_udp"`
	Data    string `json:"data_tcp"`
	DataUDP string `json:"data_udp"`
	Disc    string `json:"discovery_udp"`
	Stats   Stats  `json:"stats"`
	// SendersDropped counts frames dropped for their sender.
	SendersDropped uint64          `json:"senders_dropped"`
	Subjects       []SubjectStatus `json:"subjects"`
}

// getStatus answers livelink get_status: listeners, counters and the
// subjects with their staleness.
func (l *Feature) getStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st status
	if err := l.h.Do(ctx, func() {
		if l.err != nil {
			st.Error = l.err.Error()
		}
		if l.rx != nil {
			st.Enabled = true
			a := l.rx.Addrs()
			st.Face, st.Data, st.DataUDP, st.Disc = a.Face, a.Data, a.DataUDP, a.Discovery
			st.Stats = l.rx.Stats()
		}
	}); err != nil {
		return nil, fmt.Errorf("livelink: %w", err)
	}
	st.Subjects = l.registry.Status()
	st.SendersDropped = l.senders.List().Dropped
	return st, nil
}

// listSenders answers livelink list_senders: the allow-list and the
// senders whose frames were dropped.
func (l *Feature) listSenders(context.Context, *ws.Client, json.RawMessage) (any, error) {
	return l.senders.List(), nil
}

type senderParams struct {
	Address string `json:"address"`
}

func decodeSender(params json.RawMessage) (string, error) {
	var p senderParams
	if err := ws.DecodeParams(params, &p); err != nil {
		return "", err
	}
	addr, err := ParseSenderAddress(p.Address)
	if err != nil {
		return "", ws.ParamError("address", "%s", err.Error())
	}
	return addr, nil
}

// allowSender answers livelink allow_sender {"address": ip}: the address
// goes on the allow-list, which is saved, and its frames drive the robot.
func (l *Feature) allowSender(_ context.Context, c *ws.Client, params json.RawMessage) (any, error) {
	addr, err := decodeSender(params)
	if err != nil {
		return nil, err
	}
	a, err := l.senders.Allow(addr)
	if err != nil {
		return nil, fmt.Errorf("livelink: %w", err)
	}
	l.h.Log.Warn("LiveLink sender allowed", "source", "livelink", "address", addr, "subjects", a.Subjects, "client", clientAddr(c))
	return l.senders.List(), nil
}

// revokeSender answers livelink revoke_sender {"address": ip}.
func (l *Feature) revokeSender(_ context.Context, c *ws.Client, params json.RawMessage) (any, error) {
	addr, err := decodeSender(params)
	if err != nil {
		return nil, err
	}
	if err := l.senders.Revoke(addr); err != nil {
		if errors.Is(err, ErrNotAllowed) {
			return nil, ws.ParamError("address", "%s", err.Error())
		}
		return nil, fmt.Errorf("livelink: %w", err)
	}
	l.h.Log.Warn("LiveLink sender revoked", "source", "livelink", "address", addr, "client", clientAddr(c))
	return l.senders.List(), nil
}

// clientAddr names the API client behind a change, for the activity log.
func clientAddr(c *ws.Client) string {
	if c == nil {
		return ""
	}
	return c.Info().RemoteAddr
}
