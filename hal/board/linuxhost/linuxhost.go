package linuxhost

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/board"
)

// Metrics are a machine's health. A value that could not be read is zero
// and its error is in Errors.
type Metrics struct {
	board.Metrics
	Load1, Load5, Load15 float64
	Uptime               time.Duration
	MemoryTotalMB        int
	MemoryAvailableMB    int
	DiskTotalBytes       uint64
	DiskFreeBytes        uint64
	DiskUsagePct         float64
	// Errors lists what could not be read, "cpu temperature: ..." and the
	// like.
	Errors []string
}

// Sampler takes Metrics samples. CPU use is measured between one Sample
// and the next (since boot on the first), so one Sampler serves one reader.
// It is safe for concurrent use.
type Sampler struct {
	root fs.FS
	disk func() (total, free uint64, err error)

	mu   sync.Mutex
	last cpuSample
}

// NewSampler returns a Sampler reading from root (nil means the machine's
// "/") and taking disk use from disk (nil means StatFS("/")).
func NewSampler(root fs.FS, disk func() (total, free uint64, err error)) *Sampler {
	if root == nil {
		root = os.DirFS("/")
	}
	if disk == nil {
		disk = func() (uint64, uint64, error) { return StatFS("/") }
	}
	return &Sampler{root: root, disk: disk}
}

// cpuSample is the cumulative CPU time of /proc/stat's "cpu" line, in
// clock ticks.
type cpuSample struct {
	busy, total uint64
}

// Sample reads every metric.
func (s *Sampler) Sample() Metrics {
	var m Metrics
	fail := func(what string, err error) { m.Errors = append(m.Errors, what+": "+err.Error()) }

	if str, err := ReadString(s.root, "sys/class/thermal/thermal_zone0/temp"); err != nil {
		fail("cpu temperature", err)
	} else if milli, err := strconv.ParseFloat(str, 64); err != nil {
		fail("cpu temperature", fmt.Errorf("%q is not millidegrees", str))
	} else {
		m.CPUTempC = milli / 1000
	}

	if cur, err := readCPU(s.root); err != nil {
		fail("cpu usage", err)
	} else {
		s.mu.Lock()
		prev := s.last
		s.last = cur
		s.mu.Unlock()
		if dt := cur.total - prev.total; cur.total > prev.total {
			m.CPUUsagePct = float64(cur.busy-prev.busy) / float64(dt) * 100
		}
	}

	if mi, err := MemInfo(s.root); err != nil {
		fail("memory", err)
	} else if total, avail := mi["MemTotal"], mi["MemAvailable"]; total > 0 {
		m.MemoryTotalMB = int(total / 1024)
		m.MemoryAvailableMB = int(avail / 1024)
		m.MemoryUsagePct = float64(total-avail) / float64(total) * 100
	}

	if str, err := ReadString(s.root, "proc/loadavg"); err != nil {
		fail("load", err)
	} else if f := strings.Fields(str); len(f) >= 3 {
		m.Load1, _ = strconv.ParseFloat(f[0], 64)
		m.Load5, _ = strconv.ParseFloat(f[1], 64)
		m.Load15, _ = strconv.ParseFloat(f[2], 64)
	}

	if str, err := ReadString(s.root, "proc/uptime"); err != nil {
		fail("uptime", err)
	} else if f := strings.Fields(str); len(f) >= 1 {
		if sec, err := strconv.ParseFloat(f[0], 64); err == nil {
			m.Uptime = time.Duration(sec * float64(time.Second))
		}
	}

	if total, free, err := s.disk(); err != nil {
		fail("disk", err)
	} else if total > 0 {
		m.DiskTotalBytes, m.DiskFreeBytes = total, free
		m.DiskUsagePct = float64(total-free) / float64(total) * 100
	}
	return m
}

// readCPU reads the cumulative CPU time: busy is everything but idle and
// iowait.
func readCPU(root fs.FS) (cpuSample, error) {
	s, err := ReadString(root, "proc/stat")
	if err != nil {
		return cpuSample{}, err
	}
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuSample{}, fmt.Errorf("first line of /proc/stat is %q, want the cpu totals", line)
	}
	var c cpuSample
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return cpuSample{}, fmt.Errorf("/proc/stat cpu field %d is %q, want a count", i+1, v)
		}
		// Fields: user nice system idle iowait irq softirq steal guest
		// guest_nice; guest time is already counted in user and nice.
		switch i {
		case 3, 4:
		case 8, 9:
			continue
		default:
			c.busy += n
		}
		c.total += n
	}
	return c, nil
}

// ReadString reads a /proc or /sys file (path relative to root) as one
// trimmed string; device-tree strings lose their NUL terminator.
func ReadString(root fs.FS, path string) (string, error) {
	b, err := fs.ReadFile(root, path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(bytes.TrimRight(b, "\x00"))), nil
}

// MemInfo returns /proc/meminfo's values in kB by key ("MemTotal" ...).
func MemInfo(root fs.FS) (map[string]uint64, error) {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// Interface is one network interface's name and IPv4 addresses.
type Interface struct {
	Name  string
	Addrs []string
}

// Addresses picks the robot's two addresses from the interfaces, as the
// robot's network is laid out: the internal one is on the nodes'
// wired network (192.168.10.0/24, else the first eth*/en* address) and the
// external one on Wi-Fi (wlan*/wl*). Either may be "".
func Addresses(ifaces []Interface) (internal, external string) {
	var firstWired string
	for _, ifc := range ifaces {
		for _, a := range ifc.Addrs {
			switch {
			case strings.HasPrefix(a, "192.168.10."):
				if internal == "" {
					internal = a
				}
			case strings.HasPrefix(ifc.Name, "wl"):
				if external == "" {
					external = a
				}
			case strings.HasPrefix(ifc.Name, "eth") || strings.HasPrefix(ifc.Name, "en"):
				if firstWired == "" {
					firstWired = a
				}
			}
		}
	}
	if internal == "" {
		internal = firstWired
	}
	return internal, external
}

// Interfaces lists the machine's up, non-loopback interfaces with their
// IPv4 addresses.
func Interfaces() []Interface {
	list, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []Interface
	for _, ifc := range list {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		it := Interface{Name: ifc.Name}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				it.Addrs = append(it.Addrs, ipn.IP.String())
			}
		}
		if len(it.Addrs) > 0 {
			out = append(out, it)
		}
	}
	return out
}
