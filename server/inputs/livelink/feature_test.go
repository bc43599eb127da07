package livelink

import "testing"

func TestListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr     string
		external bool
		want     string
	}{
		{"0.0.0.0:11111", false, "127.0.0.1:11111"},
		{"0.0.0.0:11111", true, "0.0.0.0:11111"},
		{"[::]:54322", false, "127.0.0.1:54322"},
		{"192.168.4.1:54321", false, "127.0.0.1:54321"},
		{"192.168.4.1:54321", true, "192.168.4.1:54321"},
		{":54322", false, "127.0.0.1:54322"},
		{"127.0.0.1:0", false, "127.0.0.1:0"},
		{"[::1]:0", false, "[::1]:0"},
		{"localhost:11111", false, "localhost:11111"},
		{"", false, ""},
	} {
		if got := ListenAddr(c.addr, c.external); got != c.want {
			t.Errorf("ListenAddr(%q, %v) = %q, want %q", c.addr, c.external, got, c.want)
		}
	}
}
