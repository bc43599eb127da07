package mdns

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand"
	"net"
	"net/netip"
	"testing"
	"time"
)

func robot(t *testing.T) *Responder {
	t.Helper()
	r, err := New(Service{Instance: "Robot", Host: "saint-server", Port: 9090, TXT: []string{"path=/saint"},
		Addrs: []netip.Addr{netip.MustParseAddr("192.168.10.1"), netip.MustParseAddr("fe80::1")}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Names and records written out by hand from RFC 1035 §3.1 and §4.1, RFC
// 2782 and RFC 6762 §10.2.
const (
	nameType     = "\x06_saint\x04_tcp\x05local\x00"
	nameInstance = "\x05Robot" + nameType
	nameHost     = "\x0csaint-server\x05local\x00"
	ttl120       = "\x00\x00\x00\x78"
	classIN      = "\x00\x01"
	classFlush   = "\x80\x01"

	recPTR = nameType + "\x00\x0c" + classIN + ttl120 + "\x00\x19" + nameInstance
	recSRV = nameInstance + "\x00\x21" + classFlush + ttl120 + "\x00\x1a" + "\x00\x00\x00\x00\x23\x82" + nameHost
	recTXT = nameInstance + "\x00\x10" + classFlush + ttl120 + "\x00\x0c" + "\x0bpath=/saint"
	recA   = nameHost + "\x00\x01" + classFlush + ttl120 + "\x00\x04" + "\xc0\xa8\x0a\x01"
)

func header(id uint16, flags uint16, qd, an, ns, ar uint16) string {
	b := make([]byte, 12)
	for i, v := range []uint16{id, flags, qd, an, ns, ar} {
		binary.BigEndian.PutUint16(b[2*i:], v)
	}
	return string(b)
}

func checkBytes(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("%s:\n got %s\nwant %s", what, hex.EncodeToString(got), hex.EncodeToString([]byte(want)))
	}
}

func TestBrowseAnswerByteForByte(t *testing.T) {
	query := header(0, 0, 1, 0, 0, 0) + nameType + "\x00\x0c" + classIN
	resp, unicast, ok := robot(t).Answer([]byte(query), false)
	if !ok || unicast {
		t.Fatalf("ok %v unicast %v", ok, unicast)
	}
	// One answer (the PTR), three additional records (SRV, TXT, A): the
	// IPv6 address is not advertised as an A record.
	want := header(0, 0x8400, 0, 1, 0, 3) + recPTR + recSRV + recTXT + recA
	checkBytes(t, "PTR answer", resp, want)
}

func TestHostAnswerByteForByte(t *testing.T) {
	query := header(0, 0, 1, 0, 0, 0) + nameHost + "\x00\x01" + classIN
	resp, _, ok := robot(t).Answer([]byte(query), false)
	if !ok {
		t.Fatal("A question for saint-server.local unanswered")
	}
	checkBytes(t, "A answer", resp, header(0, 0x8400, 0, 1, 0, 0)+recA)
}

func TestCompressedQuestionsAndUnicastBit(t *testing.T) {
	// Second question "Robot" + pointer to offset 12 (the first name),
	// type SRV, class IN with the QU bit; names in other case.
	query := header(7, 0, 2, 0, 0, 0) + "\x06_SAINT\x04_tcp\x05LOCAL\x00" + "\x00\x0c" + classIN +
		"\x05robot\xc0\x0c" + "\x00\x21" + "\x80\x01"
	resp, unicast, ok := robot(t).Answer([]byte(query), false)
	if !ok || !unicast {
		t.Fatalf("ok %v unicast %v; want an answer by unicast (QU bit)", ok, unicast)
	}
	// PTR and SRV answer; TXT and A come as additional records; the SRV is
	// not repeated; multicast DNS answers carry ID 0 (RFC 6762 §18.1).
	want := header(0, 0x8400, 0, 2, 0, 2) + recPTR + recSRV + recTXT + recA
	checkBytes(t, "answer", resp, want)
}

func TestLegacyUnicastQuery(t *testing.T) {
	query := header(0x1234, 0x0100, 1, 0, 0, 0) + nameHost + "\x00\x01" + classIN
	resp, unicast, ok := robot(t).Answer([]byte(query), true)
	if !ok || !unicast {
		t.Fatalf("ok %v unicast %v", ok, unicast)
	}
	// RFC 6762 §6.7: the ID and the question are echoed, TTL at most 10 s,
	// no cache-flush bit.
	want := header(0x1234, 0x8400, 1, 1, 0, 0) + nameHost + "\x00\x01" + classIN +
		nameHost + "\x00\x01" + classIN + "\x00\x00\x00\x0a" + "\x00\x04" + "\xc0\xa8\x0a\x01"
	checkBytes(t, "legacy answer", resp, want)
}

func TestServiceEnumerationAndAny(t *testing.T) {
	enum := "\x09_services\x07_dns-sd\x04_udp\x05local\x00"
	resp, _, ok := robot(t).Answer([]byte(header(0, 0, 1, 0, 0, 0)+enum+"\x00\x0c"+classIN), false)
	want := header(0, 0x8400, 0, 1, 0, 0) + enum + "\x00\x0c" + classIN + ttl120 + "\x00\x13" + nameType
	if !ok {
		t.Fatal("service enumeration unanswered")
	}
	checkBytes(t, "enumeration", resp, want)

	resp, _, ok = robot(t).Answer([]byte(header(0, 0, 1, 0, 0, 0)+nameInstance+"\x00\xff"+classIN), false)
	if !ok {
		t.Fatal("ANY question for the instance unanswered")
	}
	checkBytes(t, "ANY", resp, header(0, 0x8400, 0, 2, 0, 1)+recSRV+recTXT+recA)
}

func TestQuestionsForOthersAndNonQueriesIgnored(t *testing.T) {
	r := robot(t)
	for name, msg := range map[string]string{
		"other host":      header(0, 0, 1, 0, 0, 0) + "\x05other\x05local\x00" + "\x00\x01" + classIN,
		"AAAA (none)":     header(0, 0, 1, 0, 0, 0) + nameHost + "\x00\x1c" + classIN,
		"a response":      header(0, 0x8400, 0, 1, 0, 0) + recA,
		"opcode 2":        header(0, 0x1000, 1, 0, 0, 0) + nameHost + "\x00\x01" + classIN,
		"pointer loop":    header(0, 0, 1, 0, 0, 0) + "\xc0\x0c" + "\x00\x01" + classIN,
		"truncated label": header(0, 0, 1, 0, 0, 0) + "\x3fabc",
		"empty":           "",
	} {
		if resp, _, ok := r.Answer([]byte(msg), false); ok {
			t.Errorf("%s answered: %x", name, resp)
		}
	}
}

func TestGarbageNeverPanics(t *testing.T) {
	r := robot(t)
	valid := []byte(header(0, 0, 2, 0, 0, 0) + nameType + "\x00\x0c" + classIN + "\x05robot\xc0\x0c\x00\x21\x80\x01")
	for n := range valid {
		r.Answer(valid[:n], false)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		b := append([]byte(nil), valid...)
		for j := 0; j < 1+rng.Intn(4); j++ {
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
		}
		r.Answer(b, rng.Intn(2) == 0)
	}
}

func TestAnnouncementAndGoodbye(t *testing.T) {
	r := robot(t)
	hello, err := r.Announcement(false)
	if err != nil {
		t.Fatal(err)
	}
	checkBytes(t, "announcement", hello, header(0, 0x8400, 0, 4, 0, 0)+recPTR+recSRV+recTXT+recA)
	bye, err := r.Announcement(true)
	if err != nil {
		t.Fatal(err)
	}
	zero := func(rec string) string {
		return string(bytes.Replace([]byte(rec), []byte(ttl120), []byte("\x00\x00\x00\x00"), 1))
	}
	checkBytes(t, "goodbye", bye, header(0, 0x8400, 0, 4, 0, 0)+zero(recPTR)+zero(recSRV)+zero(recTXT)+zero(recA))
}

func TestServeOverUDP(t *testing.T) {
	r := robot(t)
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	group, err := net.ListenPacket("udp4", "127.0.0.1:0") // stands in for the multicast group
	if err != nil {
		t.Fatal(err)
	}
	defer group.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	defer conn.Close()
	go func() { done <- r.Serve(ctx, conn, group.LocalAddr(), nil) }()

	read := func(c net.PacketConn) []byte {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2048)
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		return buf[:n]
	}
	hello, _ := r.Announcement(false)
	if got := read(group); !bytes.Equal(got, hello) {
		t.Errorf("first packet to the group %x, want the announcement", got)
	}
	// A resolver asking from an ordinary port gets a legacy unicast answer.
	asker, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer asker.Close()
	query := header(0x4242, 0, 1, 0, 0, 0) + nameHost + "\x00\x01" + classIN
	if _, err := asker.WriteTo([]byte(query), conn.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	want, _, _ := r.Answer([]byte(query), true)
	if got := read(asker); !bytes.Equal(got, want) {
		t.Errorf("unicast answer %x, want %x", got, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	bye, _ := r.Announcement(true)
	for {
		got := read(group)
		if bytes.Equal(got, hello) {
			continue // the second announcement
		}
		if !bytes.Equal(got, bye) {
			t.Errorf("last packet %x, want the goodbye", got)
		}
		break
	}
}

func TestServiceChecked(t *testing.T) {
	if _, err := New(Service{Host: "saint-server"}); err == nil {
		t.Error("service without a port accepted")
	}
	if _, err := New(Service{Host: "saint.server", Port: 1}); err == nil {
		t.Error("dotted host accepted")
	}
	if r, err := New(Service{Port: 9090}); err != nil || r.HostName() != "saint-server.local." {
		t.Errorf("defaults: %v %v", r, err)
	}
}
