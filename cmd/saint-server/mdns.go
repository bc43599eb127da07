package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/server/mdns"
	"github.com/saint-os/saint/server/settings"
)

// MDNSAuto advertises on every interface that is up, multicast-capable,
// not the loopback and has an address: the robot's Wi-Fi and its internal
// network alike.
const MDNSAuto = "auto"

// mdnsInterfaces resolves the --mdns value: "" none, MDNSAuto every
// suitable interface, else the comma-separated names (each must exist).
func mdnsInterfaces(spec string, all func() ([]net.Interface, error)) ([]net.Interface, error) {
	if spec == "" {
		return nil, nil
	}
	ifs, err := all()
	if err != nil {
		return nil, fmt.Errorf("--mdns: listing interfaces: %w", err)
	}
	if spec == MDNSAuto {
		var out []net.Interface
		for _, ifi := range ifs {
			if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagMulticast != 0 && ifi.Flags&net.FlagLoopback == 0 {
				if addrs, err := mdns.InterfaceAddrs(&ifi); err == nil && len(addrs) > 0 {
					out = append(out, ifi)
				}
			}
		}
		return out, nil
	}
	var out []net.Interface
	for _, name := range strings.Split(spec, ",") {
		found := false
		for _, ifi := range ifs {
			if ifi.Name == name {
				out, found = append(out, ifi), true
			}
		}
		if !found {
			return nil, fmt.Errorf("--mdns %s: no interface %q on this machine (use auto, or one of the names ip link lists)", spec, name)
		}
	}
	return out, nil
}

// mdnsHost is the host label advertised for the Hostname setting: its
// first label ("saint-server" of "saint-server.lan"), since mDNS names are
// NAME.local.
func mdnsHost(hostname string) string {
	host, _, _ := strings.Cut(hostname, ".")
	if host == "" {
		return mdns.DefaultHost
	}
	return host
}

// advertiser keeps the mDNS advertisement in step with the settings: it
// starts advertising HOSTNAME.local (the system.hostname setting) on its
// interfaces, and starts again under the new name when the setting
// changes.
type advertiser struct {
	ctx       context.Context
	ifs       []net.Interface
	port      uint16
	log       *slog.Logger
	advertise func(ctx context.Context, svc mdns.Service, ifi *net.Interface, log *slog.Logger) error

	mu     sync.Mutex
	host   string
	cancel context.CancelFunc
}

// startMDNS advertises the WebSocket API at wsAddr on spec's interfaces
// under the settings' host name, until ctx ends.
func startMDNS(ctx context.Context, spec, wsAddr string, st *settings.Store, log *slog.Logger) error {
	ifs, err := mdnsInterfaces(spec, net.Interfaces)
	if err != nil || len(ifs) == 0 {
		if err == nil && spec != "" {
			log.Warn("mdns: no interface to advertise on yet (none up with an address)", "mdns", spec)
		}
		return err
	}
	_, portStr, err := net.SplitHostPort(wsAddr)
	if err != nil {
		return fmt.Errorf("--mdns: the WebSocket API is not listening (%q)", wsAddr)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("--mdns: WebSocket port %q: %w", portStr, err)
	}
	a := &advertiser{ctx: ctx, ifs: ifs, port: uint16(port), log: log.With("component", "mdns"), advertise: mdns.Advertise}
	a.follow(st)
	return nil
}

// follow advertises under st's host name now and after every change of it.
func (a *advertiser) follow(st *settings.Store) {
	a.restart(st.Get().System.Hostname)
	st.Watch(func(s settings.Settings) { a.restart(s.System.Hostname) })
}

// restart advertises under hostname, stopping the previous advertisement,
// unless the name is the one advertised already.
func (a *advertiser) restart(hostname string) {
	host := mdnsHost(hostname)
	a.mu.Lock()
	defer a.mu.Unlock()
	if host == a.host && a.cancel != nil {
		return
	}
	if a.cancel != nil {
		a.cancel()
	}
	ctx, cancel := context.WithCancel(a.ctx)
	a.host, a.cancel = host, cancel
	svc := mdns.Service{Host: host, Port: a.port, TXT: []string{"path=/saint", "version=" + version}}
	for i := range a.ifs {
		ifi := a.ifs[i]
		go func() {
			if err := a.advertise(ctx, svc, &ifi, a.log); err != nil && ctx.Err() == nil {
				a.log.Error("mdns advertising stopped", "interface", ifi.Name, "err", err)
			}
		}()
	}
}
