package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/natsbus"
)

// What the node's status says of its bus link: why it is down and for
// how long, what kept it out once back, nothing after a plain
// reconnection (the server applying new permissions at adoption).
func TestDescribeLink(t *testing.T) {
	refused := errors.New("nats: authorization violation")
	for _, tc := range []struct {
		link natsbus.Link
		want []string
	}{
		{natsbus.Link{Err: errors.New("EOF")}, []string{"EOF", "reconnecting"}},
		{natsbus.Link{Attempts: 7, Err: refused, Down: 4200 * time.Millisecond}, []string{"authorization violation", "7 attempts", "4s", "still trying"}},
		{natsbus.Link{Up: true, Attempts: 7, Err: refused, Down: 9 * time.Second}, []string{"after 7 failed attempts", "9s", "authorization violation"}},
		{natsbus.Link{Up: true, Err: errors.New("EOF")}, nil},
		{natsbus.Link{Up: true}, nil},
	} {
		got := describeLink(tc.link)
		if tc.want == nil && got != "" {
			t.Errorf("%+v: %q, want nothing", tc.link, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q, want it to say %q", tc.link, got, w)
			}
		}
	}
}
