package rtpspeer

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Endpoint is a topic the peer announces a writer and a reader on.
type Endpoint struct {
	Topic    string // the DDS topic, "rt/saint/tracks/cmd_vel"
	TypeName string // the DDS type name, "geometry_msgs::msg::dds_::Twist_"
}

// Options configure a Peer.
type Options struct {
	Domain    uint32
	Endpoints []Endpoint
	// Members are the members of the type the endpoints announce; nil
	// means an int8 and a uint8.
	Members []Member
	// Period between announcements; 0 means 100 ms.
	Period time.Duration
}

// Peer is a running hand-built participant on 127.0.0.1.
type Peer struct {
	o       Options
	prefix  [12]byte
	conn    *net.UDPConn
	port    int
	typeObj []byte
	typeID  [14]byte
	stop    chan struct{}
	done    sync.WaitGroup

	mu       sync.Mutex
	heard    map[[12]byte]time.Time
	requests int
	replySeq uint64
}

// RTPS well-known numbers (RTPS 2.3, 9.3 and 9.6; DDS-XTypes 1.3, 7.6.3.3.4).
var (
	entSPDPWriter    = [4]byte{0x00, 0x01, 0x00, 0xc2}
	entSPDPReader    = [4]byte{0x00, 0x01, 0x00, 0xc7}
	entSEDPPubWriter = [4]byte{0x00, 0x00, 0x03, 0xc2}
	entSEDPPubReader = [4]byte{0x00, 0x00, 0x03, 0xc7}
	entSEDPSubWriter = [4]byte{0x00, 0x00, 0x04, 0xc2}
	entSEDPSubReader = [4]byte{0x00, 0x00, 0x04, 0xc7}
	entTLReqWriter   = [4]byte{0x00, 0x03, 0x00, 0xc3}
	entTLReplyWriter = [4]byte{0x00, 0x03, 0x01, 0xc3}
	entTLReplyReader = [4]byte{0x00, 0x03, 0x01, 0xc4}
	vendor           = [2]byte{0x01, 0x10}
)

const (
	pidSentinel           = 0x0001
	pidLeaseDuration      = 0x0002
	pidTopicName          = 0x0005
	pidTypeName           = 0x0007
	pidDomainID           = 0x000f
	pidProtocolVersion    = 0x0015
	pidVendorID           = 0x0016
	pidReliability        = 0x001a
	pidDefaultUnicast     = 0x0031
	pidMetatrafficUnicast = 0x0032
	pidParticipantGUID    = 0x0050
	pidBuiltinEndpointSet = 0x0058
	pidEndpointGUID       = 0x005a
	pidDataRepresentation = 0x0073
	pidTypeInformation    = 0x0075

	// The builtin endpoints announced: participant announcer and
	// detector, publications and subscriptions announcer and detector,
	// the TypeLookup service's request reader and reply writer (and its
	// request writer and reply reader, as XTypes peers have them).
	builtinEndpoints = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<12 | 1<<13 | 1<<14 | 1<<15

	maxParticipantIndex = 60 // cyclone.LoopbackConfig's MaxAutoParticipantIndex
)

// metaPort is the metatraffic unicast port of participant index i in
// domain d (RTPS 2.3, 9.6.1.1: PB 7400, DG 250, PG 2, d1 10).
func metaPort(d uint32, i int) int { return 7400 + 250*int(d) + 10 + 2*i }

// Start binds the metatraffic port of a free participant index on
// 127.0.0.1 and starts announcing.
func Start(o Options) (*Peer, error) {
	if len(o.Endpoints) == 0 {
		return nil, errors.New("rtpspeer: Options.Endpoints is empty")
	}
	if o.Members == nil {
		o.Members = []Member{{"speed", TKInt8}, {"mode", TKUint8}}
	}
	if o.Period <= 0 {
		o.Period = 100 * time.Millisecond
	}
	p := &Peer{o: o, stop: make(chan struct{}), heard: map[[12]byte]time.Time{}}
	if _, err := rand.Read(p.prefix[:]); err != nil {
		return nil, err
	}
	// From the top of the index range down, leaving the low indices to
	// the participants under test.
	for i := maxParticipantIndex; i >= 0 && p.conn == nil; i-- {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: metaPort(o.Domain, i)})
		if err == nil {
			p.conn, p.port = c, metaPort(o.Domain, i)
		}
	}
	if p.conn == nil {
		return nil, fmt.Errorf("rtpspeer: no free participant port in domain %d", o.Domain)
	}
	p.typeObj = MinimalStruct(o.Members)
	p.typeID = TypeID(p.typeObj)
	p.done.Add(2)
	go p.receive()
	go p.announce()
	return p, nil
}

// GUIDPrefix is the peer's participant GUID prefix.
func (p *Peer) GUIDPrefix() [12]byte { return p.prefix }

// Heard returns the GUID prefixes of the participants whose SPDP
// announcements the peer has received.
func (p *Peer) Heard() map[[12]byte]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[[12]byte]time.Time, len(p.heard))
	for k, v := range p.heard {
		out[k] = v
	}
	return out
}

// TypeRequests is how many TypeLookup requests the peer has received.
func (p *Peer) TypeRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// RepliesSent is how many TypeLookup replies the peer has sent.
func (p *Peer) RepliesSent() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replySeq
}

// Close stops the peer. It does not announce its leaving: to the others
// it goes silent, as a crashed peer does.
func (p *Peer) Close() {
	close(p.stop)
	p.conn.Close()
	p.done.Wait()
}

func (p *Peer) announce() {
	defer p.done.Done()
	t := time.NewTicker(p.o.Period)
	defer t.Stop()
	for {
		p.sendAll(p.message(p.spdp()))
		p.sendAll(p.message(p.sedp()...))
		p.sendAll(p.message(p.reply([16]byte{}, 0)...))
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

func (p *Peer) sendAll(msg []byte) {
	for i := 0; i <= maxParticipantIndex; i++ {
		if port := metaPort(p.o.Domain, i); port != p.port {
			_, _ = p.conn.WriteToUDP(msg, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		}
	}
}

// message is an RTPS message of the peer with submessages subs.
func (p *Peer) message(subs ...[]byte) []byte {
	b := []byte{'R', 'T', 'P', 'S', 2, 3, vendor[0], vendor[1]}
	b = append(b, p.prefix[:]...)
	for _, s := range subs {
		b = append(b, s...)
	}
	return b
}

func seqNum(b []byte, s uint64) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(s>>32))
	return binary.LittleEndian.AppendUint32(b, uint32(s))
}

// data is a DATA submessage (little-endian) carrying payload as sample
// seq of writer to reader.
func data(reader, writer [4]byte, seq uint64, payload []byte) []byte {
	body := []byte{0, 0, 16, 0} // extraFlags, octetsToInlineQos
	body = append(body, reader[:]...)
	body = append(body, writer[:]...)
	body = seqNum(body, seq)
	body = append(body, payload...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	h := []byte{0x15, 0x01 | 0x04, 0, 0} // DATA, E|D
	binary.LittleEndian.PutUint16(h[2:], uint16(len(body)))
	return append(h, body...)
}

// heartbeat says writer has samples first..last, so that a reliable
// reader takes them.
func heartbeat(reader, writer [4]byte, first, last uint64, count uint32) []byte {
	b := []byte{0x07, 0x01, 28, 0}
	b = append(b, reader[:]...)
	b = append(b, writer[:]...)
	b = seqNum(b, first)
	b = seqNum(b, last)
	return binary.LittleEndian.AppendUint32(b, count)
}

// plist builds a little-endian parameter list (PL_CDR_LE).
type plist struct{ b []byte }

func newPlist() *plist { return &plist{b: []byte{0x00, 0x03, 0x00, 0x00}} }

func (l *plist) add(pid uint16, v []byte) {
	for len(v)%4 != 0 {
		v = append(v, 0)
	}
	l.b = binary.LittleEndian.AppendUint16(l.b, pid)
	l.b = binary.LittleEndian.AppendUint16(l.b, uint16(len(v)))
	l.b = append(l.b, v...)
}

func (l *plist) str(pid uint16, s string) {
	v := binary.LittleEndian.AppendUint32(nil, uint32(len(s)+1))
	l.add(pid, append(append(v, s...), 0))
}

func (l *plist) done() []byte {
	l.add(pidSentinel, nil)
	return l.b
}

func (p *Peer) guid(ent [4]byte) []byte { return append(append([]byte{}, p.prefix[:]...), ent[:]...) }

func locator(port int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1) // LOCATOR_KIND_UDPv4
	b = binary.LittleEndian.AppendUint32(b, uint32(port))
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1)
}

func (p *Peer) spdp() []byte {
	l := newPlist()
	l.add(pidProtocolVersion, []byte{2, 3})
	l.add(pidVendorID, vendor[:])
	l.add(pidDomainID, binary.LittleEndian.AppendUint32(nil, p.o.Domain))
	l.add(pidParticipantGUID, p.guid([4]byte{0, 0, 1, 0xc1}))
	l.add(pidBuiltinEndpointSet, binary.LittleEndian.AppendUint32(nil, builtinEndpoints))
	l.add(pidMetatrafficUnicast, locator(p.port))
	l.add(pidDefaultUnicast, locator(p.port))
	l.add(pidLeaseDuration, []byte{20, 0, 0, 0, 0, 0, 0, 0})
	return data(entSPDPReader, entSPDPWriter, 1, l.done())
}

// endpoint is the SEDP sample of one of the peer's endpoints.
func (p *Peer) endpoint(ent [4]byte, e Endpoint, reliable bool) []byte {
	l := newPlist()
	l.add(pidEndpointGUID, p.guid(ent))
	l.add(pidParticipantGUID, p.guid([4]byte{0, 0, 1, 0xc1}))
	l.str(pidTopicName, e.Topic)
	l.str(pidTypeName, e.TypeName)
	kind := uint32(1) // best effort
	if reliable {
		kind = 2
	}
	rel := binary.LittleEndian.AppendUint32(nil, kind)
	l.add(pidReliability, append(rel, 0, 0, 0, 0, 0, 0, 0, 0))
	l.add(pidDataRepresentation, []byte{1, 0, 0, 0, 0, 0}) // XCDR1
	// A complete type the peer never sends: the minimal one is what a
	// type lookup asks for.
	complete := TypeID(append([]byte("complete:"), p.typeObj...))
	l.add(pidTypeInformation, TypeInformation(p.typeID, uint32(len(p.typeObj)), complete, 0))
	return l.done()
}

// sedp announces a writer (reliable) and a reader (best effort) on every
// endpoint's topic.
func (p *Peer) sedp() [][]byte {
	var pubs, subs [][]byte
	n := uint64(len(p.o.Endpoints))
	pubs = append(pubs, heartbeat(entSEDPPubReader, entSEDPPubWriter, 1, n, 1))
	subs = append(subs, heartbeat(entSEDPSubReader, entSEDPSubWriter, 1, n, 1))
	for i, e := range p.o.Endpoints {
		key := byte(i + 1)
		pubs = append(pubs, data(entSEDPPubReader, entSEDPPubWriter, uint64(i+1), p.endpoint([4]byte{0, 0, key, 0x03}, e, true)))
		subs = append(subs, data(entSEDPSubReader, entSEDPSubWriter, uint64(i+1), p.endpoint([4]byte{0, 0, key, 0x04}, e, false)))
	}
	return append(pubs, subs...)
}

// reply is a TypeLookup reply carrying the type object, as a new sample
// each time (a reader that dropped an earlier one takes the next).
func (p *Peer) reply(requestWriter [16]byte, requestSeq uint64) [][]byte {
	p.mu.Lock()
	p.replySeq++
	seq := p.replySeq
	p.mu.Unlock()
	body := TypeLookupReply(requestWriter, requestSeq, p.typeID, p.typeObj)
	pad := (4 - len(body)%4) % 4
	payload := append([]byte{0x00, 0x07, 0x00, byte(pad)}, body...) // CDR2_LE
	return [][]byte{
		heartbeat(entTLReplyReader, entTLReplyWriter, seq, seq, uint32(seq)),
		data(entTLReplyReader, entTLReplyWriter, seq, payload),
	}
}

func (p *Peer) receive() {
	defer p.done.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := p.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.handle(buf[:n])
	}
}

// handle notes the SPDP announcements and TypeLookup requests in one
// RTPS message and answers the requests.
func (p *Peer) handle(m []byte) {
	if len(m) < 20 || string(m[:4]) != "RTPS" {
		return
	}
	var src [12]byte
	copy(src[:], m[8:20])
	for off := 20; off+4 <= len(m); {
		id, flags := m[off], m[off+1]
		var size int
		if flags&1 != 0 {
			size = int(binary.LittleEndian.Uint16(m[off+2:]))
		} else {
			size = int(binary.BigEndian.Uint16(m[off+2:]))
		}
		body := m[off+4:]
		if size == 0 || size > len(body) {
			size = len(body)
		}
		body = body[:size]
		off += 4 + size
		if id != 0x15 || len(body) < 20 {
			continue
		}
		var writer [4]byte
		copy(writer[:], body[8:12])
		inlineQoS := int(binary.LittleEndian.Uint16(body[2:]))
		if flags&1 == 0 {
			inlineQoS = int(binary.BigEndian.Uint16(body[2:]))
		}
		switch writer {
		case entSPDPWriter:
			if src != p.prefix {
				p.mu.Lock()
				p.heard[src] = time.Now()
				p.mu.Unlock()
			}
		case entTLReqWriter:
			if flags&0x02 != 0 { // inline QoS before the payload: not sent by the implementations tested
				continue
			}
			payload := body[4+inlineQoS:]
			if len(payload) < 4+24 {
				continue
			}
			var reqWriter [16]byte
			copy(reqWriter[:], payload[4:20])
			seq := uint64(binary.LittleEndian.Uint32(payload[20:]))<<32 | uint64(binary.LittleEndian.Uint32(payload[24:]))
			p.mu.Lock()
			p.requests++
			p.mu.Unlock()
			p.sendAll(p.message(p.reply(reqWriter, seq)...))
		}
	}
}
