package mdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Multicast group and port of mDNS over IPv4 (RFC 6762 §3).
const (
	Port = 5353
)

// GroupIPv4 is the mDNS IPv4 multicast address.
var GroupIPv4 = netip.MustParseAddr("224.0.0.251")

// Defaults for Service fields left zero.
const (
	DefaultServiceType = "_saint._tcp"
	DefaultHost        = "saint-server"
	// DefaultTTL is the TTL of every record, the value RFC 6762 §10
	// recommends for records naming a host.
	DefaultTTL = 120
	// legacyTTL caps the TTL in answers to legacy unicast queries (§6.7).
	legacyTTL = 10
	// serviceEnum is the DNS-SD service type enumeration name (RFC 6763 §9).
	serviceEnum = "_services._dns-sd._udp.local."
)

// Service is what the responder advertises.
type Service struct {
	// Instance is the service instance's name, e.g. "SAINT.OS robot";
	// default the host name.
	Instance string
	// Type is the service type, default "_saint._tcp".
	Type string
	// Host is the host name without ".local", default "saint-server".
	Host string
	// Port is the service's port (the WebSocket API, 9090 on a robot).
	Port uint16
	// TXT holds key=value strings (RFC 6763 §6), e.g. "path=/saint".
	TXT []string
	// Addrs are the host's IPv4 addresses for A records.
	Addrs []netip.Addr
	// TTL of every record; 0 means DefaultTTL.
	TTL uint32
}

// Responder answers mDNS queries for one Service.
type Responder struct {
	svc                           Service
	host, serviceType, instance   string // fully qualified, lower case except instance
	ptr, srv, txt                 Record
	addrs                         []Record
	hostKey, typeKey, instanceKey string // lower case, for matching questions
}

// New checks svc and builds its records.
func New(svc Service) (*Responder, error) {
	if svc.Type == "" {
		svc.Type = DefaultServiceType
	}
	if svc.Host == "" {
		svc.Host = DefaultHost
	}
	if svc.Instance == "" {
		svc.Instance = svc.Host
	}
	if svc.TTL == 0 {
		svc.TTL = DefaultTTL
	}
	if svc.Port == 0 {
		return nil, errors.New("mdns: Service.Port: required (the port the service listens on)")
	}
	if strings.Contains(svc.Host, ".") {
		return nil, fmt.Errorf("mdns: Service.Host %q: want a single label such as saint-server (\".local\" is added)", svc.Host)
	}
	r := &Responder{svc: svc}
	r.host = svc.Host + ".local."
	r.serviceType = svc.Type + ".local."
	r.instance = strings.ReplaceAll(svc.Instance, ".", `\.`) + "." + r.serviceType
	r.hostKey, r.typeKey = strings.ToLower(r.host), strings.ToLower(r.serviceType)
	r.instanceKey = strings.ToLower(svc.Instance + "." + r.serviceType)

	ptr, err := PTRData(r.instance)
	if err != nil {
		return nil, err
	}
	srv, err := SRVData(0, 0, svc.Port, r.host)
	if err != nil {
		return nil, err
	}
	txt, err := TXTData(svc.TXT)
	if err != nil {
		return nil, err
	}
	if _, err := appendName(nil, r.instance); err != nil {
		return nil, fmt.Errorf("mdns: Service.Instance: %w", err)
	}
	r.ptr = Record{Name: r.serviceType, Type: TypePTR, TTL: svc.TTL, Data: ptr}
	r.srv = Record{Name: r.instance, Type: TypeSRV, Unique: true, TTL: svc.TTL, Data: srv}
	r.txt = Record{Name: r.instance, Type: TypeTXT, Unique: true, TTL: svc.TTL, Data: txt}
	for _, a := range svc.Addrs {
		if !a.Is4() {
			continue
		}
		r.addrs = append(r.addrs, Record{Name: r.host, Type: TypeA, Unique: true, TTL: svc.TTL, Data: AData(a.As4())})
	}
	return r, nil
}

// HostName is the advertised host name, e.g. "saint-server.local.".
func (r *Responder) HostName() string { return r.host }

// Answer returns the response to query, or ok false when the query asks
// nothing this responder knows. legacy is true for a query from a port
// other than 5353 (a plain DNS resolver, RFC 6762 §6.7): the answer then
// echoes its ID and questions, has no cache-flush bits and TTLs of at most
// 10 s, and goes back by unicast.
func (r *Responder) Answer(query []byte, legacy bool) (resp []byte, unicast bool, ok bool) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, false, false
	}
	var answers, extra []Record
	add := func(list *[]Record, recs ...Record) {
		for _, rec := range recs {
			if !slices.ContainsFunc(answers, rec.same) && !slices.ContainsFunc(extra, rec.same) {
				*list = append(*list, rec)
			}
		}
	}
	for _, question := range q.Questions {
		unicast = unicast || question.Unicast
		anyType := question.Type == TypeANY
		switch question.Name {
		case r.typeKey:
			if anyType || question.Type == TypePTR {
				add(&answers, r.ptr)
			}
		case r.instanceKey:
			if anyType || question.Type == TypeSRV {
				add(&answers, r.srv)
			}
			if anyType || question.Type == TypeTXT {
				add(&answers, r.txt)
			}
		case r.hostKey:
			if anyType || question.Type == TypeA {
				add(&answers, r.addrs...)
			}
		case serviceEnum:
			if anyType || question.Type == TypePTR {
				data, _ := PTRData(r.serviceType)
				add(&answers, Record{Name: serviceEnum, Type: TypePTR, TTL: r.svc.TTL, Data: data})
			}
		}
	}
	if len(answers) == 0 {
		return nil, false, false
	}
	// Additional records spare the asker the next questions (RFC 6763 §12).
	for _, a := range answers {
		switch a.Type {
		case TypePTR:
			if a.Name == r.serviceType {
				add(&extra, r.srv, r.txt)
				add(&extra, r.addrs...)
			}
		case TypeSRV:
			add(&extra, r.addrs...)
		}
	}
	m := Message{Answers: answers, Additional: extra}
	if legacy {
		m.ID, m.Questions = q.ID, q.Questions
		m.Answers, m.Additional = legacyRecords(m.Answers), legacyRecords(m.Additional)
		unicast = true
	}
	out, err := m.Encode()
	if err != nil {
		return nil, false, false
	}
	return out, unicast, true
}

func (rec Record) same(o Record) bool {
	return rec.Name == o.Name && rec.Type == o.Type && string(rec.Data) == string(o.Data)
}

func legacyRecords(in []Record) []Record {
	out := make([]Record, len(in))
	for i, r := range in {
		r.Unique = false
		r.TTL = min(r.TTL, legacyTTL)
		out[i] = r
	}
	return out
}

// Announcement is the unsolicited response that tells the network about
// every record (RFC 6762 §8.3); with goodbye, the same records with TTL 0,
// which tells caches to drop them (§10.1).
func (r *Responder) Announcement(goodbye bool) ([]byte, error) {
	recs := append([]Record{r.ptr, r.srv, r.txt}, r.addrs...)
	if goodbye {
		for i := range recs {
			recs[i].TTL = 0
		}
	}
	return Message{Answers: recs}.Encode()
}

// Serve answers queries arriving on conn (a socket joined to the mDNS
// group, see Listen) until ctx ends: it announces the records twice, a
// second apart, answers every query it can, and says goodbye at the end.
// Multicast answers go to dst (the group address); unicast ones to the
// asker.
func (r *Responder) Serve(ctx context.Context, conn net.PacketConn, dst net.Addr, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	go r.announce(ctx, conn, dst, log)
	buf := make([]byte, 9000)
	for {
		n, from, err := conn.ReadFrom(buf)
		if ctx.Err() != nil {
			if bye, err := r.Announcement(true); err == nil {
				_, _ = conn.WriteTo(bye, dst)
			}
			return nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("mdns: %w", err)
		}
		legacy := false
		if ua, ok := from.(*net.UDPAddr); ok && ua.Port != Port {
			legacy = true
		}
		resp, unicast, ok := r.Answer(buf[:n], legacy)
		if !ok {
			continue
		}
		to := dst
		if unicast {
			to = from
		}
		if _, err := conn.WriteTo(resp, to); err != nil {
			log.Debug("mdns answer not sent", "to", to, "err", err)
		}
	}
}

func (r *Responder) announce(ctx context.Context, conn net.PacketConn, dst net.Addr, log *slog.Logger) {
	msg, err := r.Announcement(false)
	if err != nil {
		log.Error("mdns announcement", "err", err)
		return
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for i := 0; i < 2; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := conn.WriteTo(msg, dst); err != nil {
			log.Warn("mdns announcement not sent", "err", err)
		}
		t.Reset(time.Second)
	}
}

// Listen joins the mDNS IPv4 group on ifi (nil: the system's default
// multicast interface) and returns the socket and the group address to
// answer to.
func Listen(ifi *net.Interface) (*net.UDPConn, *net.UDPAddr, error) {
	group := &net.UDPAddr{IP: net.IP(GroupIPv4.AsSlice()), Port: Port}
	conn, err := net.ListenMulticastUDP("udp4", ifi, group)
	if err != nil {
		return nil, nil, fmt.Errorf("mdns: listening on %v:%d: %w", GroupIPv4, Port, err)
	}
	return conn, group, nil
}

// InterfaceAddrs returns the IPv4 addresses of ifi (nil: every up,
// non-loopback interface), for Service.Addrs.
func InterfaceAddrs(ifi *net.Interface) ([]netip.Addr, error) {
	var ifs []net.Interface
	if ifi != nil {
		ifs = []net.Interface{*ifi}
	} else {
		all, err := net.Interfaces()
		if err != nil {
			return nil, err
		}
		for _, i := range all {
			if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
				ifs = append(ifs, i)
			}
		}
	}
	var out []netip.Addr
	for _, i := range ifs {
		addrs, err := i.Addrs()
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
				out = append(out, p.Addr())
			}
		}
	}
	return out, nil
}

// Advertise runs a responder for svc on ifi until ctx ends: the one call
// saint-server needs. Without svc.Addrs, the interface's IPv4 addresses
// are advertised.
func Advertise(ctx context.Context, svc Service, ifi *net.Interface, log *slog.Logger) error {
	if len(svc.Addrs) == 0 {
		addrs, err := InterfaceAddrs(ifi)
		if err != nil {
			return fmt.Errorf("mdns: addresses: %w", err)
		}
		svc.Addrs = addrs
	}
	r, err := New(svc)
	if err != nil {
		return err
	}
	conn, group, err := Listen(ifi)
	if err != nil {
		return err
	}
	defer conn.Close()
	if log != nil {
		log.Info("advertising over mDNS", "host", r.HostName(), "service", r.serviceType, "port", svc.Port, "addrs", svc.Addrs)
	}
	return r.Serve(ctx, conn, group, log)
}
