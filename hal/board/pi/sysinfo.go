package pi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/saint-os/saint/hal/board/linuxhost"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// readString returns the trimmed content of path in root, NULs (device-tree
// strings end in one) and surrounding space removed.
func readString(root fs.FS, path string) (string, error) {
	return linuxhost.ReadString(root, path)
}

// cpuinfo returns the "key : value" lines of /proc/cpuinfo that follow the
// per-processor blocks (Hardware, Revision, Serial, Model); later keys win.
func cpuinfo(root fs.FS) (map[string]string, error) {
	b, err := fs.ReadFile(root, "proc/cpuinfo")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, sc.Err()
}

// Revision is a decoded new-style Raspberry Pi revision code (bit 23 set),
// https://www.raspberrypi.com/documentation/computers/raspberry-pi.html#new-style-revision-codes
type Revision struct {
	Code     uint32
	Type     int // 0x11 is a Pi 4 Model B, 0x17 a Pi 5
	Revision int // the board revision, 4 in "1.4"
	MemoryMB int
	SoC      string // "BCM2711"
	Maker    string // "Sony UK"
}

var (
	revisionSoCs   = []string{"BCM2835", "BCM2836", "BCM2837", "BCM2711", "BCM2712"}
	revisionMakers = []string{"Sony UK", "Egoman", "Embest", "Sony Japan", "Embest", "Stadium"}
)

// parseRevision decodes a revision code as /proc/cpuinfo prints it,
// "c03114".
func parseRevision(s string) (Revision, error) {
	code, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return Revision{}, fmt.Errorf("revision code %q: want hexadecimal", s)
	}
	c := uint32(code)
	if c&(1<<23) == 0 {
		return Revision{}, fmt.Errorf("revision code %q: an old-style code (before the Pi 2), not supported", s)
	}
	r := Revision{
		Code:     c,
		Type:     int(c >> 4 & 0xFF),
		Revision: int(c & 0xF),
		MemoryMB: 256 << (c >> 20 & 0x7),
	}
	if i := int(c >> 12 & 0xF); i < len(revisionSoCs) {
		r.SoC = revisionSoCs[i]
	}
	if i := int(c >> 16 & 0xF); i < len(revisionMakers) {
		r.Maker = revisionMakers[i]
	}
	return r, nil
}

// errNoEthernet is returned when the machine has no Ethernet-type interface.
var errNoEthernet = errors.New("no Ethernet-type interface in /sys/class/net")

// macAddress returns the MAC of eth0, or of the first other interface (by
// name) of type 1 (ARPHRD_ETHER, which includes Wi-Fi) with a non-zero
// address.
func macAddress(root fs.FS) (string, error) {
	if mac, err := readString(root, "sys/class/net/eth0/address"); err == nil && usableMAC(mac) {
		return mac, nil
	}
	ents, err := fs.ReadDir(root, "sys/class/net")
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if t, _ := readString(root, "sys/class/net/"+n+"/type"); t != "1" {
			continue
		}
		if mac, err := readString(root, "sys/class/net/"+n+"/address"); err == nil && usableMAC(mac) {
			return mac, nil
		}
	}
	return "", errNoEthernet
}

func usableMAC(mac string) bool {
	return mac != "" && mac != "00:00:00:00:00:00"
}

// meminfo returns the kB values of /proc/meminfo by name.
func meminfo(root fs.FS) (map[string]uint64, error) { return linuxhost.MemInfo(root) }
