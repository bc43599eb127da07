package mdns

import (
	"net/netip"
	"testing"
)

// Whatever arrives on the mDNS port, the responder never panics and
// answers only with a well-formed message.
func FuzzAnswer(f *testing.F) {
	r, err := New(Service{Instance: "Robot", Host: "saint-server", Port: 9090, TXT: []string{"path=/saint"},
		Addrs: []netip.Addr{netip.MustParseAddr("192.168.10.1")}})
	if err != nil {
		f.Fatal(err)
	}
	ann, err := r.Announcement(false)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ann, false)
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 12, 's', 'a', 'i', 'n', 't', '-', 's', 'e', 'r', 'v', 'e', 'r', 5, 'l', 'o', 'c', 'a', 'l', 0, 0, 1, 0, 1}, true)
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0, 12, 0, 1, 0, 1}, false) // a pointer to itself
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, query []byte, legacy bool) {
		resp, _, ok := r.Answer(query, legacy)
		if ok && len(resp) < 12 {
			t.Fatalf("answer of %d bytes: shorter than a DNS header", len(resp))
		}
	})
}
