package natsbus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/persist"
)

// NodeClientPrefix starts the connection name of every node ("saint-node
// pi-a1b2"): the server's authenticator reads the node id from it and
// binds the node's key to that id.
const NodeClientPrefix = "saint-node "

// NodeClientName is the connection name a node with id uses.
func NodeClientName(id string) string { return NodeClientPrefix + id }

// NodeInboxPrefix is where a node's replies come: each node may subscribe
// to its own replies only. The '_' cannot appear in the random inbox names
// other clients use, so no other inbox falls under it.
func NodeInboxPrefix(id string) string { return "_INBOX.node_" + id }

// LoadOrCreateKey reads the nkey seed in path, or makes a new user key pair
// and writes its seed there (0600, in a 0700 directory) when the file does
// not exist: a node's bus identity, made at first boot and kept.
func LoadOrCreateKey(path string) (nkeys.KeyPair, error) {
	kp, err := ReadKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return kp, err
	}
	kp, err = nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("natsbus: creating a key: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, fmt.Errorf("natsbus: creating a key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	if err := persist.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("natsbus: writing key: %w", err)
	}
	return kp, nil
}

// ReadKey reads a user nkey seed ("SU...") from path: the file the server
// writes for its own clients (server.nk, ros2.nk, tools.nk), or a node's.
func ReadKey(path string) (nkeys.KeyPair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("natsbus: key: %w", err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(data))))
	if err != nil {
		return nil, fmt.Errorf("natsbus: key %s: %w", path, err)
	}
	if pub, err := kp.PublicKey(); err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("natsbus: key %s: not a user key (want a seed starting with SU)", path)
	}
	return kp, nil
}

// FingerprintLen is how many characters of a public key KeyFingerprint
// shows after its leading 'U': about 77 bits, more than a device could
// match by making keys until one starts the same.
const FingerprintLen = 16

// KeyFingerprint is the short form of public nkey key that a node prints
// at boot and the adopt page asks the operator to compare: its first
// FingerprintLen characters after the 'U', in groups of four
// ("ABCD EFGH IJKL MNOP"). A key too short to have one is returned as
// it is.
func KeyFingerprint(key string) string {
	k := strings.TrimPrefix(key, "U")
	if len(k) < FingerprintLen {
		return key
	}
	var b strings.Builder
	for i := 0; i < FingerprintLen; i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k[i : i+4])
	}
	return b.String()
}

// ServerServicesName is the name of saint-server's service connection
// (Options.ServiceName): the server's key connecting under it may only
// receive service requests and answer them in inboxes.
const ServerServicesName = "saint-server services"
