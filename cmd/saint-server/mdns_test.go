package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/server/mdns"
	"github.com/saint-os/saint/server/settings"
)

func TestMDNSInterfaces(t *testing.T) {
	lo := net.Interface{Index: 1, Name: "lo", Flags: net.FlagUp | net.FlagLoopback | net.FlagMulticast}
	down := net.Interface{Index: 3, Name: "wlan0", Flags: net.FlagMulticast}
	all := func() ([]net.Interface, error) { return []net.Interface{lo, down}, nil }
	if got, err := mdnsInterfaces("", all); err != nil || got != nil {
		t.Errorf(`"": %v %v, want none`, got, err)
	}
	if got, err := mdnsInterfaces(MDNSAuto, all); err != nil || len(got) != 0 {
		t.Errorf("auto with only the loopback and a down interface: %v %v, want none", got, err)
	}
	if got, err := mdnsInterfaces("wlan0", all); err != nil || len(got) != 1 || got[0].Name != "wlan0" {
		t.Errorf("wlan0: %v %v", got, err)
	}
	if _, err := mdnsInterfaces("wlan0,eth9", all); err == nil || !strings.Contains(err.Error(), `"eth9"`) {
		t.Errorf("an unknown interface: %v, want an error naming it", err)
	}
	// This machine's own interfaces: auto never picks the loopback.
	got, err := mdnsInterfaces(MDNSAuto, net.Interfaces)
	if err != nil {
		t.Fatal(err)
	}
	for _, ifi := range got {
		if ifi.Flags&net.FlagLoopback != 0 || ifi.Flags&net.FlagUp == 0 {
			t.Errorf("auto picked %+v", ifi)
		}
	}
}

func TestMDNSHostFollowsTheHostnameSetting(t *testing.T) {
	for in, want := range map[string]string{"saint-server": "saint-server", "robot-7.lan": "robot-7", "": mdns.DefaultHost} {
		if got := mdnsHost(in); got != want {
			t.Errorf("mdnsHost(%q) = %q, want %q", in, got, want)
		}
	}
	st, err := settings.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	live := map[string]int{} // host → advertisements running
	seen := make(chan string, 10)
	a := &advertiser{ctx: ctx, port: 9090, log: slog.New(slog.DiscardHandler),
		ifs: []net.Interface{{Index: 2, Name: "eth0"}, {Index: 3, Name: "wlan0"}},
		advertise: func(ctx context.Context, svc mdns.Service, ifi *net.Interface, _ *slog.Logger) error {
			if svc.Port != 9090 {
				t.Errorf("advertised port %d", svc.Port)
			}
			mu.Lock()
			live[svc.Host]++
			mu.Unlock()
			seen <- svc.Host + "@" + ifi.Name
			<-ctx.Done()
			mu.Lock()
			live[svc.Host]--
			mu.Unlock()
			return nil
		}}
	a.follow(st)
	wait := func(want ...string) {
		t.Helper()
		got := map[string]bool{}
		for range want {
			select {
			case s := <-seen:
				got[s] = true
			case <-time.After(5 * time.Second):
				t.Fatalf("advertised %v, want %v", got, want)
			}
		}
		for _, w := range want {
			if !got[w] {
				t.Fatalf("advertised %v, want %v", got, want)
			}
		}
	}
	wait("saint-server@eth0", "saint-server@wlan0")
	if _, err := st.Patch([]byte(`{"system": {"hostname": "robot-7"}}`)); err != nil {
		t.Fatal(err)
	}
	wait("robot-7@eth0", "robot-7@wlan0")
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		old, cur := live["saint-server"], live["robot-7"]
		mu.Unlock()
		if old != 0 || cur != 2 {
			return fmt.Errorf("advertisements running: %d as saint-server, %d as robot-7; want the old name stopped", old, cur)
		}
		return nil
	})
	// Another setting changes: the advertisement stays.
	if _, err := st.Patch([]byte(`{"system": {"server_name": "SAINT-09"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-seen:
		t.Errorf("re-advertised %s for a change of another setting", s)
	case <-time.After(50 * time.Millisecond):
	}
}
