package busaccess_test

import (
	"log/slog"
	"net"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/saint-os/saint/server/busaccess"
)

// Refused bus connections from many addresses (the whole of 127.0.0.0/8
// on the robot's own machine is one stranger's) cannot flood the activity
// log's warnings: past a budget a minute, the refusals of the minute are
// folded into one summary, so the warnings logged before them stay.
func TestRefusalsFromManyAddressesAreBounded(t *testing.T) {
	ev := &events{}
	a, ns := plainBroker(t, busaccess.Options{})
	a.LogEventsTo(slog.New(ev))
	url := ns.ClientURL()
	const addrs = 100
	for i := range addrs {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(i+1))}
		nc, err := nats.Connect(url, nats.NoReconnect(), nats.Name("stranger"),
			nats.SetCustomDialer(&net.Dialer{LocalAddr: local}))
		if err == nil {
			nc.Close()
			t.Fatalf("a client with no key from %s was let in", local.IP)
		}
		if !refused(err) {
			t.Fatalf("from %s: %v, want an authorization violation", local.IP, err)
		}
	}
	if got := ev.list(); len(got) > 21 {
		t.Errorf("%d warnings for %d refused connections from %d addresses in a minute, want at most 21 (a budget of 20 and a summary)",
			len(got), addrs, addrs)
	} else if len(got) == 0 {
		t.Errorf("no warning for %d refused connections", addrs)
	}
}
