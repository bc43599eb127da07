package livelink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// Options configures a Receiver. Addresses are "host:port"; port 0 picks
// a free port (see Addrs); an empty address turns that listener off.
type Options struct {
	Exec *executor.Executor // required: the server's executor
	Bus  bus.Bus            // required
	Log  *slog.Logger
	// FaceAddr is the Live Link Face UDP address (":11111").
	FaceAddr string
	// DataAddr is the JSON data address (":54322"): TCP, one frame per
	// line, and UDP on the same port, one frame per datagram.
	DataAddr string
	// DiscoveryAddr is the discovery UDP address (":54321").
	DiscoveryAddr string
	// Name is the broadcast name in announcements.
	Name string
	// AnnounceTo are the UDP addresses announcements are sent to every
	// AnnounceEvery (default 1 s). Nil means DiscoveryGroup on the
	// discovery port; an empty, non-nil list announces nowhere.
	AnnounceTo    []string
	AnnounceEvery time.Duration
	// StaleAfter (default 1 s) marks a silent subject stale; ForgetAfter
	// (default 5 min) forgets it. MaxSubjects defaults to 256.
	StaleAfter  time.Duration
	ForgetAfter time.Duration
	MaxSubjects int
	// MaxConnections bounds the JSON data connections (default 32).
	MaxConnections int
	// Registry is the subject registry to update; nil makes one. A server
	// that restarts its receiver (new ports) keeps its registry.
	Registry *Registry
	// Senders is the allow-list frames are checked against; nil takes
	// frames from every sender.
	Senders *Senders
}

// Stats counts what the receiver took and refused.
type Stats struct {
	FacePackets   uint64 `json:"face_packets"`
	FaceRejected  uint64 `json:"face_rejected"`
	JSONFrames    uint64 `json:"json_frames"`
	JSONRejected  uint64 `json:"json_rejected"`
	Connections   int64  `json:"connections"`
	Beacons       uint64 `json:"beacons"`
	BeaconsBad    uint64 `json:"beacons_rejected"`
	PublishFailed uint64 `json:"publish_failed"`
}

// Addrs are the bound addresses ("" when off). DataUDP is Data's port
// over UDP.
type Addrs struct {
	Face, Data, DataUDP, Discovery string
}

// Receiver is the LiveLink receiver. Start and Stop run on the executor.
type Receiver struct {
	o        Options
	log      *slog.Logger
	registry *Registry
	aliases  map[string]string

	face      *net.UDPConn
	dataUDP   *net.UDPConn
	discovery *net.UDPConn
	data      net.Listener
	announce  []*net.UDPAddr
	sweep     *executor.Timer
	beacon    *executor.Timer
	// running is set between Start and Stop (executor): frames posted by
	// the readers after Stop are dropped.
	running bool
	wg      sync.WaitGroup

	connMu sync.Mutex
	conns  map[net.Conn]struct{}

	facePackets, faceRejected, jsonFrames, jsonRejected atomic.Uint64
	beacons, beaconsBad, publishFailed                  atomic.Uint64
	connections                                         atomic.Int64
}

// New returns a receiver; nothing is opened before Start.
func New(o Options) (*Receiver, error) {
	if o.Exec == nil || o.Bus == nil {
		return nil, errors.New("livelink: Options.Exec and Options.Bus are required")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.AnnounceEvery <= 0 {
		o.AnnounceEvery = time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = time.Second
	}
	if o.ForgetAfter <= 0 {
		o.ForgetAfter = 5 * time.Minute
	}
	if o.MaxSubjects <= 0 {
		o.MaxSubjects = 256
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = 32
	}
	reg := o.Registry
	if reg == nil {
		reg = NewRegistry(o.StaleAfter, o.ForgetAfter, o.MaxSubjects)
	}
	return &Receiver{o: o, log: o.Log.With("source", "livelink"), aliases: arkitAliases(),
		registry: reg, conns: map[net.Conn]struct{}{}}, nil
}

// Registry returns the subject registry (router.SubjectRegistry).
func (r *Receiver) Registry() *Registry { return r.registry }

// Stats returns the counters.
func (r *Receiver) Stats() Stats {
	return Stats{
		FacePackets: r.facePackets.Load(), FaceRejected: r.faceRejected.Load(),
		JSONFrames: r.jsonFrames.Load(), JSONRejected: r.jsonRejected.Load(),
		Connections: r.connections.Load(), Beacons: r.beacons.Load(), BeaconsBad: r.beaconsBad.Load(),
		PublishFailed: r.publishFailed.Load(),
	}
}

// Addrs returns the bound addresses; valid after Start.
func (r *Receiver) Addrs() Addrs {
	var a Addrs
	if r.face != nil {
		a.Face = r.face.LocalAddr().String()
	}
	if r.data != nil {
		a.Data = r.data.Addr().String()
	}
	if r.dataUDP != nil {
		a.DataUDP = r.dataUDP.LocalAddr().String()
	}
	if r.discovery != nil {
		a.Discovery = r.discovery.LocalAddr().String()
	}
	return a
}

// Start opens the listeners and starts reading. Call it on the executor.
func (r *Receiver) Start() error {
	var err error
	if r.o.FaceAddr != "" {
		if r.face, err = listenUDP(r.o.FaceAddr); err != nil {
			r.Stop()
			return fmt.Errorf("livelink: Live Link Face UDP on %s: %w", r.o.FaceAddr, err)
		}
	}
	if r.o.DataAddr != "" {
		if r.data, err = net.Listen("tcp", r.o.DataAddr); err != nil {
			r.Stop()
			return fmt.Errorf("livelink: JSON data TCP on %s: %w", r.o.DataAddr, err)
		}
		// The same port over UDP (the TCP listener's, when DataAddr asked
		// for a free one).
		host, _, _ := net.SplitHostPort(r.o.DataAddr)
		_, port, _ := net.SplitHostPort(r.data.Addr().String())
		if r.dataUDP, err = listenUDP(net.JoinHostPort(host, port)); err != nil {
			r.Stop()
			return fmt.Errorf("livelink: JSON data UDP on %s: %w", net.JoinHostPort(host, port), err)
		}
	}
	if r.o.DiscoveryAddr != "" {
		if r.discovery, err = listenUDP(r.o.DiscoveryAddr); err != nil {
			r.Stop()
			return fmt.Errorf("livelink: discovery UDP on %s: %w", r.o.DiscoveryAddr, err)
		}
		to := r.o.AnnounceTo
		if to == nil {
			_, port, _ := net.SplitHostPort(r.discovery.LocalAddr().String())
			to = []string{net.JoinHostPort(DiscoveryGroup, port)}
		}
		for _, a := range to {
			ua, err := net.ResolveUDPAddr("udp", a)
			if err != nil {
				r.Stop()
				return fmt.Errorf("livelink: announce address %q: %w", a, err)
			}
			r.announce = append(r.announce, ua)
		}
	}
	if r.face != nil {
		r.wg.Add(1)
		go r.readFace(r.face)
	}
	if r.data != nil {
		r.wg.Add(1)
		go r.acceptData(r.data)
	}
	if r.dataUDP != nil {
		r.wg.Add(1)
		go r.readDataUDP(r.dataUDP)
	}
	if r.discovery != nil {
		r.wg.Add(1)
		go r.readDiscovery(r.discovery)
		if len(r.announce) > 0 {
			r.sendAnnounce()
			r.beacon = r.o.Exec.Every(r.o.AnnounceEvery, r.sendAnnounce)
		}
	}
	r.sweep = r.o.Exec.Every(r.o.StaleAfter/4, r.onSweep)
	r.running = true
	a := r.Addrs()
	r.log.Info("LiveLink receiver listening", "face_udp", a.Face, "data_tcp", a.Data, "data_udp", a.DataUDP, "discovery_udp", a.Discovery)
	return nil
}

// Stop closes the listeners and connections. Call it on the executor; it
// does not wait for the readers, whose posts after Stop are dropped.
func (r *Receiver) Stop() {
	r.running = false
	for _, t := range []*executor.Timer{r.sweep, r.beacon} {
		if t != nil {
			t.Stop()
		}
	}
	r.sweep, r.beacon = nil, nil
	if r.face != nil {
		_ = r.face.Close()
	}
	if r.dataUDP != nil {
		_ = r.dataUDP.Close()
	}
	if r.discovery != nil {
		_ = r.discovery.Close()
	}
	if r.data != nil {
		_ = r.data.Close()
	}
	r.connMu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.connMu.Unlock()
}

// Wait blocks until the reading goroutines have ended after Stop (for
// tests and shutdown off the executor).
func (r *Receiver) Wait() { r.wg.Wait() }

func listenUDP(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	return net.ListenUDP("udp", ua)
}

// readFace reads Live Link Face datagrams; a datagram that does not parse
// is counted and dropped.
func (r *Receiver) readFace(c *net.UDPConn) {
	defer r.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p, err := ParseFacePacket(buf[:n])
		if err != nil {
			if r.faceRejected.Add(1) == 1 {
				r.log.Warn("Live Link Face packet rejected (later ones are counted only)", "from", from.String(), "err", err)
			}
			continue
		}
		r.facePackets.Add(1)
		ip := from.Addr().Unmap().String()
		r.o.Exec.Post(func() {
			now := r.o.Exec.Now()
			r.take(FaceFrame(&p, seconds(now)), ip, now)
		})
	}
}

// readDataUDP reads JSON frames sent as UDP datagrams, one frame per
// datagram (a trailing newline is allowed): for trackers that stream
// transforms, where a late frame is worth less than the next one. A
// datagram that is not a frame is counted and dropped; nothing is sent
// back.
func (r *Receiver) readDataUDP(c *net.UDPConn) {
	defer r.wg.Done()
	buf := make([]byte, MaxJSONFrame+1)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		b := bytes.TrimSpace(buf[:n])
		if len(b) == 0 {
			continue
		}
		f, err := DecodeJSONFrame(b)
		if err != nil {
			if r.jsonRejected.Add(1) == 1 {
				r.log.Warn("LiveLink JSON datagram rejected (later ones are counted only)", "from", from.String(), "err", err)
			}
			continue
		}
		r.jsonFrames.Add(1)
		ip := from.Addr().Unmap().String()
		r.o.Exec.Post(func() {
			now := r.o.Exec.Now()
			r.take(f.LiveLinkFrame(seconds(now), r.aliases), ip, now)
		})
	}
}

// take records and publishes a frame (executor).
func (r *Receiver) take(f msg.LiveLinkFrame, ip string, now time.Time) {
	if !r.running {
		return
	}
	if r.o.Senders != nil && !r.o.Senders.Admit(ip, f.SubjectName, now) {
		return
	}
	wasActive := r.registry.active(f.SubjectName)
	changed, ok := r.registry.Observe(f, ip, now)
	if !ok {
		return
	}
	if err := r.o.Bus.Publish(msg.TopicLiveLinkFrames, f); err != nil {
		r.publishFailed.Add(1)
	}
	if changed {
		if s, ok := r.registry.Subject(f.SubjectName); ok {
			r.publishSubject(s)
			if !wasActive {
				r.log.Info("LiveLink subject active", "subject", s.SubjectName, "type", s.SubjectType, "from", ip)
			}
		}
	}
}

func (r *Receiver) publishSubject(s msg.LiveLinkSubject) {
	if err := r.o.Bus.Publish(msg.TopicLiveLinkSubjects, s); err != nil {
		r.publishFailed.Add(1)
	}
}

// onSweep marks silent subjects stale and publishes them (executor).
func (r *Receiver) onSweep() {
	for _, s := range r.registry.Sweep(r.o.Exec.Now()) {
		r.publishSubject(s)
		r.log.Info("LiveLink subject stale", "subject", s.SubjectName)
	}
}

// JSONError is what the data port writes back on a refused line, one JSON
// object per line; the connection stays open unless Closed is set.
type JSONError struct {
	Line    int    `json:"line"`
	Field   string `json:"field"`
	Message string `json:"error"`
	Closed  bool   `json:"closed,omitempty"`
}

// acceptData accepts JSON data connections up to MaxConnections.
func (r *Receiver) acceptData(l net.Listener) {
	defer r.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if r.connections.Load() >= int64(r.o.MaxConnections) {
			writeJSONError(c, JSONError{Field: "connection", Message: fmt.Sprintf("the server takes at most %d LiveLink connections", r.o.MaxConnections), Closed: true})
			_ = c.Close()
			continue
		}
		r.connMu.Lock()
		r.conns[c] = struct{}{}
		r.connMu.Unlock()
		r.connections.Add(1)
		r.wg.Add(1)
		go r.serveData(c)
	}
}

// serveData reads one connection's frames. A bad frame is answered with a
// JSONError and skipped; a line longer than MaxJSONFrame closes this
// connection only.
func (r *Receiver) serveData(c net.Conn) {
	defer r.wg.Done()
	defer func() {
		r.connMu.Lock()
		delete(r.conns, c)
		r.connMu.Unlock()
		r.connections.Add(-1)
		_ = c.Close()
	}()
	ip := "unknown"
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		ip = ap.Addr().Unmap().String()
	}
	br := bufio.NewReaderSize(c, 4096)
	told := false
	for line := 1; ; line++ {
		b, err := readLine(br, MaxJSONFrame)
		if errors.Is(err, errLineTooLong) {
			r.jsonRejected.Add(1)
			writeJSONError(c, JSONError{Line: line, Field: "frame", Message: fmt.Sprintf("line longer than %d bytes", MaxJSONFrame), Closed: true})
			return
		}
		if len(b) > 0 {
			r.dataLine(c, ip, line, b)
			if !told && r.o.Senders != nil && !r.o.Senders.Allowed(ip) {
				told = true
				writeJSONError(c, JSONError{Line: line, Field: "sender",
					Message: fmt.Sprintf("frames from %s are dropped until an administrator allows this address", ip)})
			}
		}
		if err != nil {
			return
		}
	}
}

func (r *Receiver) dataLine(c net.Conn, ip string, line int, b []byte) {
	if len(trimSpace(b)) == 0 {
		return
	}
	f, err := DecodeJSONFrame(b)
	if err != nil {
		r.jsonRejected.Add(1)
		je := JSONError{Line: line, Field: "frame", Message: err.Error()}
		var fe *FieldError
		if errors.As(err, &fe) {
			je.Field, je.Message = fe.Field, fe.Message
		}
		writeJSONError(c, je)
		return
	}
	r.jsonFrames.Add(1)
	r.o.Exec.Post(func() {
		now := r.o.Exec.Now()
		r.take(f.LiveLinkFrame(seconds(now), r.aliases), ip, now)
	})
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline; at the end of the
// stream it returns what is left with io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if err == io.EOF {
				return line, io.EOF
			}
			return line, err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// writeJSONError writes one error line, giving up on a client that does
// not read.
func writeJSONError(c net.Conn, e JSONError) {
	b, _ := json.Marshal(e)
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(append(b, '\n'))
}

// readDiscovery answers discover beacons with an announce.
func (r *Receiver) readDiscovery(c *net.UDPConn) {
	defer r.wg.Done()
	buf := make([]byte, MaxBeacon+1)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		bc, err := DecodeBeacon(buf[:n])
		if err != nil {
			r.beaconsBad.Add(1)
			continue
		}
		r.beacons.Add(1)
		if bc.Kind == BeaconDiscover {
			_, _ = c.WriteToUDPAddrPort(r.announcement(), from)
		}
	}
}

// announcement is the server's announce beacon.
func (r *Receiver) announcement() []byte {
	bc := Beacon{Magic: BeaconMagic, Kind: BeaconAnnounce, Name: r.o.Name}
	if r.data != nil {
		bc.DataPort = r.data.Addr().(*net.TCPAddr).Port
	}
	if r.face != nil {
		bc.FacePort = r.face.LocalAddr().(*net.UDPAddr).Port
	}
	b, _ := json.Marshal(bc)
	return b
}

// sendAnnounce sends the announcement to every announce address
// (executor; a UDP send does not block).
func (r *Receiver) sendAnnounce() {
	if r.discovery == nil {
		return
	}
	b := r.announcement()
	for _, a := range r.announce {
		_, _ = r.discovery.WriteToUDP(b, a)
	}
}
