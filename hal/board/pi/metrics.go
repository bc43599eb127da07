package pi

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/saint-os/saint/hal/board"
)

// SystemMetrics are the node's metrics with the extras board.Metrics has no
// room for. A value that could not be read is zero and its error is in
// Errors.
type SystemMetrics struct {
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

// cpuSample is the cumulative CPU time of /proc/stat's "cpu" line, in
// clock ticks.
type cpuSample struct {
	busy, total uint64
}

// Metrics implements board.Board.
func (b *Board) Metrics() board.Metrics { return b.SystemMetrics().Metrics }

// SystemMetrics reads every metric the board offers.
func (b *Board) SystemMetrics() SystemMetrics {
	var m SystemMetrics
	fail := func(what string, err error) { m.Errors = append(m.Errors, what+": "+err.Error()) }

	if s, err := readString(b.root, "sys/class/thermal/thermal_zone0/temp"); err != nil {
		fail("cpu temperature", err)
	} else if milli, err := strconv.ParseFloat(s, 64); err != nil {
		fail("cpu temperature", fmt.Errorf("%q is not millidegrees", s))
	} else {
		m.CPUTempC = milli / 1000
	}

	if cur, err := b.readCPU(); err != nil {
		fail("cpu usage", err)
	} else {
		b.mu.Lock()
		prev := b.lastCPU
		b.lastCPU = cur
		b.mu.Unlock()
		if dt := cur.total - prev.total; cur.total > prev.total {
			m.CPUUsagePct = float64(cur.busy-prev.busy) / float64(dt) * 100
		}
	}

	if mi, err := meminfo(b.root); err != nil {
		fail("memory", err)
	} else if total, avail := mi["MemTotal"], mi["MemAvailable"]; total > 0 {
		m.MemoryTotalMB = int(total / 1024)
		m.MemoryAvailableMB = int(avail / 1024)
		m.MemoryUsagePct = float64(total-avail) / float64(total) * 100
	}

	if s, err := readString(b.root, "proc/loadavg"); err != nil {
		fail("load", err)
	} else if f := strings.Fields(s); len(f) >= 3 {
		m.Load1, _ = strconv.ParseFloat(f[0], 64)
		m.Load5, _ = strconv.ParseFloat(f[1], 64)
		m.Load15, _ = strconv.ParseFloat(f[2], 64)
	}

	if s, err := readString(b.root, "proc/uptime"); err != nil {
		fail("uptime", err)
	} else if f := strings.Fields(s); len(f) >= 1 {
		if sec, err := strconv.ParseFloat(f[0], 64); err == nil {
			m.Uptime = time.Duration(sec * float64(time.Second))
		}
	}

	if total, free, err := b.disk(); err != nil {
		fail("disk", err)
	} else if total > 0 {
		m.DiskTotalBytes, m.DiskFreeBytes = total, free
		m.DiskUsagePct = float64(total-free) / float64(total) * 100
	}
	return m
}

// readCPU reads the cumulative CPU time: busy is everything but idle and
// iowait.
func (b *Board) readCPU() (cpuSample, error) {
	s, err := readString(b.root, "proc/stat")
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
