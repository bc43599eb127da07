package linuxhost

import (
	"errors"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func procFS(stat string) fstest.MapFS {
	return fstest.MapFS{
		"proc/stat":                            {Data: []byte(stat)},
		"proc/meminfo":                         {Data: []byte("MemTotal:        3884132 kB\nMemFree:          2000000 kB\nMemAvailable:    2913099 kB\n")},
		"proc/loadavg":                         {Data: []byte("0.52 0.31 0.20 2/301 1234\n")},
		"proc/uptime":                          {Data: []byte("3723.50 7000.00\n")},
		"sys/class/thermal/thermal_zone0/temp": {Data: []byte("48312\n")},
	}
}

func TestSampleReadsEveryMetric(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	fsys := procFS("cpu  100 0 100 700 100 0 0 0 50 0\ncpu0 1 2 3\n")
	disk := func() (uint64, uint64, error) { return 1000, 250, nil }
	s := NewSampler(fsys, disk)
	m := s.Sample()
	if len(m.Errors) != 0 {
		t.Fatalf("errors: %v", m.Errors)
	}
	// First sample: since boot. busy = user+system = 200 of total 1000.
	if math.Abs(m.CPUUsagePct-20) > 1e-9 {
		t.Errorf("cpu %v%%, want 20%%", m.CPUUsagePct)
	}
	if m.CPUTempC != 48.312 {
		t.Errorf("temp %v", m.CPUTempC)
	}
	if m.MemoryTotalMB != 3793 || math.Abs(m.MemoryUsagePct-25) > 0.01 {
		t.Errorf("memory %d MB %.3f%%", m.MemoryTotalMB, m.MemoryUsagePct)
	}
	if m.Load1 != 0.52 || m.Load15 != 0.20 || m.Uptime != 3723500*time.Millisecond {
		t.Errorf("load %v %v uptime %v", m.Load1, m.Load15, m.Uptime)
	}
	if m.DiskUsagePct != 75 {
		t.Errorf("disk %v%%", m.DiskUsagePct)
	}

	// Second sample: the delta only. 300 more busy ticks of 400.
	fsys["proc/stat"].Data = []byte("cpu  300 0 200 800 100 0 0 0 50 0\n")
	if m := s.Sample(); math.Abs(m.CPUUsagePct-75) > 1e-9 {
		t.Errorf("cpu since last sample %v%%, want 75%%", m.CPUUsagePct)
	}
}

func TestSampleNamesWhatItCouldNotRead(t *testing.T) {
	s := NewSampler(fstest.MapFS{"proc/stat": {Data: []byte("intr 1 2 3\n")}},
		func() (uint64, uint64, error) { return 0, 0, errors.New("no statfs") })
	m := s.Sample()
	joined := strings.Join(m.Errors, "\n")
	for _, want := range []string{"cpu temperature", "cpu usage: first line of /proc/stat", "memory", "load", "uptime", "disk: no statfs"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors %q lack %q", joined, want)
		}
	}
	if m.CPUUsagePct != 0 || m.MemoryUsagePct != 0 {
		t.Errorf("unreadable metrics not zero: %+v", m)
	}
}

func TestAddresses(t *testing.T) {
	for _, tc := range []struct {
		ifaces             []Interface
		internal, external string
	}{
		{[]Interface{{"eth0", []string{"192.168.10.1"}}, {"wlan0", []string{"10.0.0.7"}}}, "192.168.10.1", "10.0.0.7"},
		{[]Interface{{"enp3s0", []string{"172.16.0.4"}}}, "172.16.0.4", ""},
		{[]Interface{{"wlan0", []string{"10.0.0.7"}}, {"eth1", []string{"192.168.10.5"}}}, "192.168.10.5", "10.0.0.7"},
		{nil, "", ""},
	} {
		in, ex := Addresses(tc.ifaces)
		if in != tc.internal || ex != tc.external {
			t.Errorf("%v: %q %q, want %q %q", tc.ifaces, in, ex, tc.internal, tc.external)
		}
	}
}
