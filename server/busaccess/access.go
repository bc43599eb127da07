package busaccess

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/persist"
)

// Key files of the clients with every permission, in the Authority's
// directory.
const (
	ServerKeyFile = "server.nk" // saint-server's own connection
	ROS2KeyFile   = "ros2.nk"   // the ROS 2 bridge (saint-ros2 --nats-key)
	ToolsKeyFile  = "tools.nk"  // tools and scripts
	grantsFile    = "nodes.json"
)

// maxPending bounds the unadopted nodes the Authority remembers: the
// robot has a handful, and a device making up keys and ids must not grow
// the server's memory without end.
const maxPending = 256

// maxConnsPerKey bounds the connection ids remembered per key (a node
// reconnecting leaves old ids behind; only live ones matter).
const maxConnsPerKey = 4

// Options configures an Authority.
type Options struct {
	// Dir keeps the keys and the grants (required; made 0700).
	Dir string
	// Namespace is the robot's bus namespace ("/robot_7"), or "" for none:
	// the subjects a node is granted are inside it.
	Namespace string
	Log       *slog.Logger
	// Now is the wall clock, nil for time.Now: certificates' validity,
	// grants' dates and damaged files' names are real-world time, not the
	// executor's.
	Now func() time.Time
}

// Grant is a node's adoption as the bus sees it: its key and its role.
type Grant struct {
	NodeID    string    `json:"node_id"`
	Key       string    `json:"key"` // the node's public nkey, "U..."
	Role      string    `json:"role"`
	Instance  string    `json:"instance,omitempty"`
	GrantedAt time.Time `json:"granted_at"`
}

// Authority authenticates the broker's clients and holds the nodes'
// grants. It is safe for concurrent use: the broker calls Check on its
// own goroutines.
type Authority struct {
	o        Options
	log      *slog.Logger
	subjects subjects
	server   nkeys.KeyPair

	mu      sync.Mutex
	ns      *natsserver.Server
	clients map[string]string   // public key → key file, for the full-permission clients
	grants  map[string]*Grant   // by node id
	pending map[string]string   // node id → key of an unadopted node, last seen
	conns   map[string][]uint64 // public key → connection ids
}

var _ natsserver.Authentication = (*Authority)(nil)

// New opens the Authority in o.Dir, making the clients' keys at first
// start and loading the grants.
func New(o Options) (*Authority, error) {
	if o.Dir == "" {
		return nil, errors.New("busaccess: Options.Dir: missing")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, err := msgNamespaceCheck(o.Namespace); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("busaccess: %w", err)
	}
	a := &Authority{o: o, log: o.Log, subjects: newSubjects(o.Namespace),
		clients: map[string]string{}, grants: map[string]*Grant{}, pending: map[string]string{}, conns: map[string][]uint64{}}
	for _, name := range []string{ServerKeyFile, ROS2KeyFile, ToolsKeyFile} {
		kp, err := natsbus.LoadOrCreateKey(filepath.Join(o.Dir, name))
		if err != nil {
			return nil, fmt.Errorf("busaccess: %w", err)
		}
		pub, _ := kp.PublicKey()
		a.clients[pub] = name
		if name == ServerKeyFile {
			a.server = kp
		}
	}
	if err := a.load(); err != nil {
		return nil, err
	}
	return a, nil
}

func msgNamespaceCheck(ns string) (string, error) {
	if ns != "" && !strings.HasPrefix(ns, "/") {
		return "", fmt.Errorf("busaccess: Options.Namespace %q: want \"/robot_<id>\" or empty", ns)
	}
	return ns, nil
}

// ServerKey is the key saint-server's own bus connection uses.
func (a *Authority) ServerKey() nkeys.KeyPair { return a.server }

// KeyFile is the path of one of the clients' key files (ServerKeyFile,
// ROS2KeyFile, ToolsKeyFile).
func (a *Authority) KeyFile(name string) string { return filepath.Join(a.o.Dir, name) }

// Attach gives the Authority the broker whose connections it closes when a
// grant changes.
func (a *Authority) Attach(ns *natsserver.Server) {
	a.mu.Lock()
	a.ns = ns
	a.mu.Unlock()
}

func (a *Authority) grantsPath() string { return filepath.Join(a.o.Dir, grantsFile) }

func (a *Authority) load() error {
	data, err := os.ReadFile(a.grantsPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("busaccess: %w", err)
	}
	var list []*Grant
	if err := json.Unmarshal(data, &list); err != nil {
		// Nothing is granted that cannot be granted again by adopting the
		// node anew; keep the damaged file for inspection.
		aside, rerr := persist.MoveAside(a.grantsPath(), a.o.Now())
		if rerr != nil {
			return fmt.Errorf("busaccess: %s is damaged (%v) and could not be moved aside: %w", a.grantsPath(), err, rerr)
		}
		a.log.Error("bus grants damaged: moved aside; adopted nodes must be reset and adopted again", "file", aside, "err", err)
		return nil
	}
	for _, g := range list {
		if !msg.ValidNodeID(g.NodeID) || !nkeys.IsValidPublicUserKey(g.Key) {
			a.log.Error("bus grant dropped: bad node id or key", "node_id", g.NodeID, "key", g.Key)
			continue
		}
		a.grants[g.NodeID] = g
	}
	return nil
}

// save writes the grants; a.mu is held.
func (a *Authority) save() error {
	list := make([]*Grant, 0, len(a.grants))
	for _, g := range a.grants {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].NodeID < list[j].NodeID })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return persist.WriteFile(a.grantsPath(), data, 0o600)
}

// Check implements nats-server's Authentication: it verifies the
// client's nkey signature over the connection's nonce, then registers the
// client with the permissions its key has.
func (a *Authority) Check(c natsserver.ClientAuthentication) bool {
	if c.Kind() != natsserver.CLIENT {
		return false
	}
	o := c.GetOpts()
	if o == nil || o.Nkey == "" || o.Sig == "" {
		a.log.Warn("bus client refused: no nkey", "addr", remote(c), "name", nameOf(o))
		return false
	}
	if !verify(o.Nkey, o.Sig, c.GetNonce()) {
		a.log.Warn("bus client refused: bad nkey signature", "addr", remote(c), "key", o.Nkey)
		return false
	}
	perms, ok := a.permissions(o.Nkey, o.Name, remote(c))
	if !ok {
		return false
	}
	c.RegisterUser(&natsserver.User{Username: o.Nkey, Permissions: perms})
	a.mu.Lock()
	ids := append(a.conns[o.Nkey], c.GetID())
	if len(ids) > maxConnsPerKey {
		ids = ids[len(ids)-maxConnsPerKey:]
	}
	a.conns[o.Nkey] = ids
	a.mu.Unlock()
	return true
}

// permissions decides what key, connecting as name, may do; nil
// permissions are all of them.
func (a *Authority) permissions(key, name, addr string) (*natsserver.Permissions, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.clients[key]; ok {
		return nil, true
	}
	id, isNode := strings.CutPrefix(name, natsbus.NodeClientPrefix)
	if !isNode || !msg.ValidNodeID(id) {
		a.log.Warn("bus client refused: unknown key, and not a node (connection name \"saint-node <id>\")", "addr", addr, "key", key, "name", name)
		return nil, false
	}
	for other, g := range a.grants {
		if g.Key == key && other != id {
			a.log.Warn("bus client refused: key adopted as another node", "addr", addr, "key", key, "node_id", id, "adopted_as", other)
			return nil, false
		}
	}
	if g, ok := a.grants[id]; ok {
		if g.Key != key {
			a.log.Warn("bus client refused: node id adopted with another key (reset the node on the server to adopt it anew)", "addr", addr, "node_id", id, "key", key)
			return nil, false
		}
		return rolePermissions(a.subjects, id, g.Role, g.Instance), true
	}
	if old, ok := a.pending[id]; ok && old != key {
		delete(a.conns, old) // a reflashed node, or someone else: the last key wins
	} else if !ok && len(a.pending) >= maxPending {
		a.log.Warn("bus client refused: too many unadopted nodes", "addr", addr, "node_id", id, "limit", maxPending)
		return nil, false
	}
	a.pending[id] = key
	return unadoptedPermissions(a.subjects, id), true
}

// Grant adopts node id's key (the one it connects with now) into role
// (instance) and reconnects it under the new permissions.
func (a *Authority) Grant(id, role, instance string) error {
	a.mu.Lock()
	key := a.pending[id]
	if g, ok := a.grants[id]; ok && key == "" {
		key = g.Key
	}
	if key == "" {
		a.mu.Unlock()
		return fmt.Errorf("busaccess: node %s has not connected with a key", id)
	}
	prev := a.grants[id]
	a.grants[id] = &Grant{NodeID: id, Key: key, Role: role, Instance: instance, GrantedAt: a.o.Now().UTC()}
	if err := a.save(); err != nil {
		if prev != nil {
			a.grants[id] = prev
		} else {
			delete(a.grants, id)
		}
		a.mu.Unlock()
		return fmt.Errorf("busaccess: saving grant: %w", err)
	}
	delete(a.pending, id)
	a.mu.Unlock()
	a.log.Info("bus: node granted its role", "node_id", id, "role", msg.RoleKey(role, instance), "key", key)
	a.reconnect(key)
	return nil
}

// Revoke takes node id's role subjects away: it is back to an unadopted
// node's permissions (its key stays known as pending).
func (a *Authority) Revoke(id string) error {
	a.mu.Lock()
	g, ok := a.grants[id]
	if !ok {
		a.mu.Unlock()
		return nil
	}
	delete(a.grants, id)
	if err := a.save(); err != nil {
		a.grants[id] = g
		a.mu.Unlock()
		return fmt.Errorf("busaccess: saving grants: %w", err)
	}
	a.pending[id] = g.Key
	a.mu.Unlock()
	a.log.Info("bus: node's role revoked", "node_id", id, "key", g.Key)
	a.reconnect(g.Key)
	return nil
}

// Granted returns node id's grant, if it has one.
func (a *Authority) Granted(id string) (Grant, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.grants[id]
	if !ok {
		return Grant{}, false
	}
	return *g, true
}

// NodeKey is the public key node id connects with ("" when unknown): the
// granted one, or the one an unadopted node last connected with.
func (a *Authority) NodeKey(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g, ok := a.grants[id]; ok {
		return g.Key
	}
	return a.pending[id]
}

// reconnect closes key's connections; its client reconnects and Check
// gives it its permissions as they are now.
func (a *Authority) reconnect(key string) {
	a.mu.Lock()
	ns, ids := a.ns, a.conns[key]
	delete(a.conns, key)
	a.mu.Unlock()
	if ns == nil {
		return
	}
	for _, id := range ids {
		// A connection that has gone already is not an error.
		_ = ns.DisconnectClientByID(id)
	}
}

// verify checks sig (base64, as nats.go sends it) is key's signature of
// nonce.
func verify(key, sig string, nonce []byte) bool {
	if len(nonce) == 0 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return false
		}
	}
	pub, err := nkeys.FromPublicKey(key)
	if err != nil || !nkeys.IsValidPublicUserKey(key) {
		return false
	}
	return pub.Verify(nonce, raw) == nil
}

func remote(c natsserver.ClientAuthentication) string {
	if addr := c.RemoteAddress(); addr != nil {
		return addr.String()
	}
	return ""
}

func nameOf(o *natsserver.ClientOpts) string {
	if o == nil {
		return ""
	}
	return o.Name
}

// Role is the role node id was granted, if any.
func (a *Authority) Role(id string) (role, instance string, ok bool) {
	g, ok := a.Granted(id)
	return g.Role, g.Instance, ok
}
