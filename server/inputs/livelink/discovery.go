package livelink

import (
	"encoding/json"
	"fmt"
)

// Discovery: the server and LiveLink sources find each other with small
// JSON datagrams on the discovery port (UDP). The server announces itself
// every second to its announce addresses (by default the multicast group
// DiscoveryGroup), and answers a source's discover datagram with an
// announce sent straight back to the source.

// DiscoveryGroup is the multicast group announcements go to by default
// (administratively scoped, so it stays on the site's network).
const DiscoveryGroup = "239.255.83.84"

// BeaconMagic is the "saint_livelink" value of every beacon: the JSON
// protocol version.
const BeaconMagic = JSONVersion

// Beacon kinds.
const (
	BeaconAnnounce = "announce" // server → sources
	BeaconDiscover = "discover" // source → server, answered by an announce
)

// MaxBeacon is the longest beacon datagram read.
const MaxBeacon = 1024

// Beacon is one discovery datagram.
type Beacon struct {
	Magic int    `json:"saint_livelink"`
	Kind  string `json:"kind"`
	// Name is the server's broadcast name (announce) or the source's name
	// (discover, optional).
	Name string `json:"name,omitempty"`
	// The server's ports (announce): JSON data over TCP, Live Link Face
	// over UDP; 0 when that listener is off.
	DataPort int `json:"data_port,omitempty"`
	FacePort int `json:"face_port,omitempty"`
}

// DecodeBeacon decodes and checks a discovery datagram.
func DecodeBeacon(b []byte) (Beacon, error) {
	var bc Beacon
	if len(b) > MaxBeacon {
		return bc, &FieldError{Field: "beacon", Message: fmt.Sprintf("want at most %d bytes, got %d", MaxBeacon, len(b))}
	}
	if err := json.Unmarshal(b, &bc); err != nil {
		return Beacon{}, &FieldError{Field: "beacon", Message: "not a JSON object: " + err.Error(), Err: err}
	}
	if bc.Magic != BeaconMagic {
		return Beacon{}, &FieldError{Field: "saint_livelink", Message: fmt.Sprintf("want %d, got %d", BeaconMagic, bc.Magic)}
	}
	if bc.Kind != BeaconAnnounce && bc.Kind != BeaconDiscover {
		return Beacon{}, &FieldError{Field: "kind", Message: fmt.Sprintf("want %q or %q, got %q", BeaconAnnounce, BeaconDiscover, bc.Kind)}
	}
	if len(bc.Name) > MaxNameLength {
		return Beacon{}, &FieldError{Field: "name", Message: fmt.Sprintf("want at most %d bytes, got %d", MaxNameLength, len(bc.Name))}
	}
	return bc, nil
}
