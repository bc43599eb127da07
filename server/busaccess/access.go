package busaccess

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
	"github.com/saint-os/saint/internal/persource"
	"github.com/saint-os/saint/persist"
)

// Key files of the clients with every permission, in the Authority's
// directory.
const (
	ServerKeyFile = "server.nk" // saint-server's own connection
	ROS2KeyFile   = "ros2.nk"   // the ROS 2 bridge (saint-ros2 --nats-key)
	ToolsKeyFile  = "tools.nk"  // tools and scripts
	grantsFile    = "nodes.json"
	rejectedFile  = "rejected.json"
)

// Bounds on the unadopted nodes the Authority remembers: the robot has a
// handful, and a device making up keys and ids must neither grow the
// server's memory without end nor keep real new nodes out.
const (
	// maxPending bounds the unadopted node ids remembered. Beyond it, a
	// new id takes the place of the one seen least recently that has no
	// connection open, so only connected nodes hold a place.
	maxPending = 256
	// maxPendingPerHost bounds the unadopted ids connected at once from one
	// source address, so that one device cannot hold every place.
	maxPendingPerHost = 16
	// maxNewKeysPerHost bounds the keys the server has not seen that one
	// source address may bring in per newKeysWindow as unadopted nodes: a
	// device whose squatting key was rejected cannot take the id again
	// at once with key after fresh key. A node brings one key, and a
	// robot's nodes each have their own address.
	maxNewKeysPerHost = 8
	newKeysWindow     = time.Minute
	// maxNewKeyHosts bounds the addresses whose new keys are counted.
	maxNewKeyHosts = 1024
)

// maxConnsPerKey bounds the connection ids remembered per key while no
// broker is attached to tell the live ones from the closed (tests). With
// one, every live connection is remembered and the closed ones are
// forgotten (a node reconnecting leaves old ids behind), so that closing a
// key's connections, at a new grant or a rejection, closes them all.
const maxConnsPerKey = 4

// Options configures an Authority.
type Options struct {
	// Dir keeps the keys and the grants (required; made 0700).
	Dir string
	// Namespace is the robot's bus namespace ("/robot_7"), or "" for none:
	// the subjects a node is granted are inside it.
	Namespace string
	Log       *slog.Logger
	// RequireEnrolment refuses every node key that was neither enrolled
	// (Enrol) nor adopted: a robot whose nodes are all flashed with
	// enrolment lets no other device onto the bus as a node.
	RequireEnrolment bool
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

// Rejection is a key the administrator refused: a device that connected
// under a node's id with a key that is not the one the node logs.
type Rejection struct {
	Key        string    `json:"key"`
	NodeID     string    `json:"node_id"` // the id it connected under
	RejectedAt time.Time `json:"rejected_at"`
}

// Authority authenticates the broker's clients and holds the nodes'
// grants. It is safe for concurrent use: the broker calls Check on its
// own goroutines.
type Authority struct {
	o        Options
	log      *slog.Logger
	subjects subjects
	server   nkeys.KeyPair

	mu       sync.Mutex
	ns       *natsserver.Server
	events   *slog.Logger            // refusals, for the activity log
	refusals *persource.Events       // refused connections, to events
	clients  map[string]string       // public key → key file, for the full-permission clients
	grants   map[string]*Grant       // by node id
	pending  map[string]*pendingNode // by node id: unadopted nodes and the key each holds its id with
	conns    map[string][]uint64     // public key → connection ids
	rejected map[string]*Rejection   // by key: refused whatever id it gives
	lost     string                  // why the grants file was not trusted at start, "" if it was
	newKeys  map[string]*keyWindow   // by source address: the new keys it brought lately
	// enrolled are the nodes registered before their first boot, by id.
	enrolled map[string]*Enrolment
	// unenrolled paces the events of nodes connecting without enrolment.
	unenrolled *persource.Events
}

// keyWindow counts the new keys one source address brought since start.
type keyWindow struct {
	start time.Time
	n     int
}

// pendingNode is an unadopted node id as the bus knows it: the key that
// connects under it and where from. While that key has a connection open,
// no other key may connect under the id.
type pendingNode struct {
	key   string
	host  string    // source address of its last connection
	seen  time.Time // its last connection (wall clock)
	conns []uint64  // its connections under this id
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
	a := &Authority{o: o, log: o.Log, events: o.Log, subjects: newSubjects(o.Namespace),
		clients: map[string]string{}, grants: map[string]*Grant{}, pending: map[string]*pendingNode{}, conns: map[string][]uint64{},
		rejected: map[string]*Rejection{}, newKeys: map[string]*keyWindow{}, enrolled: map[string]*Enrolment{}}
	a.setEvents(o.Log)
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
	if err := a.loadRejected(); err != nil {
		return nil, err
	}
	if err := a.loadEnrolled(); err != nil {
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

// LogEventsTo sends the events an administrator should see (refused
// connections, one per source address per minute with a count) to l,
// saint-server's activity log; they go to Options.Log until then.
func (a *Authority) LogEventsTo(l *slog.Logger) {
	a.mu.Lock()
	a.setEvents(l)
	lost := a.lost
	a.mu.Unlock()
	if lost != "" {
		// Found before there was an activity log to tell.
		l.Error(lost, "source", "bus")
	}
}

// eventsPerMinute bounds the events of each kind (refused connections,
// nodes that were not enrolled) a minute across all source addresses: a
// stranger's addresses are cheap (the whole of 127.0.0.0/8 on the robot's
// own machine), and the rest of the minute's are summed in one line, so
// they cannot push the warnings before them out of the activity log.
const eventsPerMinute = 20

// setEvents makes l the logger of the events, one per source address per
// minute of each kind (at most 1024 addresses tracked at once) and at
// most eventsPerMinute a minute in all; a.mu is held, or a is new.
func (a *Authority) setEvents(l *slog.Logger) {
	a.events = l
	a.refusals = persource.NewEvents(l, slog.LevelWarn, time.Minute, 1024, eventsPerMinute, "refused bus connections", "source", "bus")
	a.unenrolled = persource.NewEvents(l, slog.LevelWarn, time.Minute, 1024, eventsPerMinute, "connections of nodes that were not enrolled", "source", "bus")
}

func (a *Authority) grantsPath() string { return filepath.Join(a.o.Dir, grantsFile) }

func (a *Authority) load() error {
	var list []*Grant
	found, err := persist.ReadJSON(a.grantsPath(), &list)
	if !found {
		return nil
	}
	if err != nil && !errors.Is(err, persist.ErrDamaged) {
		return fmt.Errorf("busaccess: %w", err)
	}
	if err != nil {
		// Nothing is granted that cannot be granted again by adopting the
		// node anew; keep the damaged file for inspection. The nodes the
		// server has adopted are shown as needing adoption (GrantsLost),
		// never taken in on the key they happen to connect with.
		aside, rerr := persist.MoveAside(a.grantsPath(), a.o.Now())
		if rerr != nil {
			return fmt.Errorf("busaccess: %s is damaged (%v) and could not be moved aside: %w", a.grantsPath(), err, rerr)
		}
		a.lost = fmt.Sprintf("the bus grants file %s was damaged (%v) and is kept as %s: every adopted node must be reset and adopted again",
			a.grantsPath(), errors.Unwrap(err), aside)
		a.log.Error("bus grants damaged: moved aside; adopted nodes must be reset and adopted again", "file", aside, "err", err)
		return nil
	}
	for _, g := range list {
		if g == nil || !msg.ValidNodeID(g.NodeID) || !nkeys.IsValidPublicUserKey(g.Key) {
			a.log.Error("bus grant dropped: bad node id or key", "entry", describeGrant(g))
			continue
		}
		a.grants[g.NodeID] = g
	}
	return nil
}

func describeGrant(g *Grant) string {
	if g == nil {
		return "null"
	}
	return fmt.Sprintf("node_id %q key %q", g.NodeID, g.Key)
}

// GrantsLost says why the grants on record cannot be trusted: the
// grants file was damaged when the Authority opened, so it holds none.
// It is "" when the grants are intact. The adoption manager then shows the
// nodes it has adopted as needing adoption rather than ACTIVE, and does
// not grant a node the key it connects with on its word.
func (a *Authority) GrantsLost() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost
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
	host := remoteHost(c)
	o := c.GetOpts()
	if o == nil || o.Nkey == "" || o.Sig == "" {
		a.refuse(host, fmt.Sprintf("no nkey (connection name %q)", nameOf(o)))
		return false
	}
	if !verify(o.Nkey, o.Sig, c.GetNonce()) {
		a.refuse(host, "bad nkey signature for key "+o.Nkey)
		return false
	}
	perms, why := a.permissions(o.Nkey, o.Name, host, c.GetID())
	if why != "" {
		a.refuse(host, why)
		return false
	}
	c.RegisterUser(&natsserver.User{Username: o.Nkey, Permissions: perms})
	a.noteUnenrolled(o.Nkey, o.Name, host)
	return true
}

// refuse reports a refused connection: to Options.Log each time at debug
// level, and as events (setEvents): the first of an address's minute at
// once, the rest as one line with their count.
func (a *Authority) refuse(host, why string) {
	a.log.Debug("bus client refused", "addr", host, "why", why)
	a.mu.Lock()
	refusals := a.refusals
	a.mu.Unlock()
	refusals.Record(host, a.o.Now(), fmt.Sprintf("bus connection from %s refused: %s", host, why))
}

// permissions decides what key, connecting as name from host, may do, and
// remembers connection cid as key's; nil permissions are all of them. why
// says why the key may not connect at all.
func (a *Authority) permissions(key, name, host string, cid uint64) (_ *natsserver.Permissions, why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var p *natsserver.Permissions
	if file, ok := a.clients[key]; !ok {
		if p, why = a.nodePermissions(key, name, host, cid); why != "" {
			return nil, why
		}
	} else if file == ServerKeyFile && name == natsbus.ServerServicesName {
		p = servicePermissions()
	}
	a.conns[key] = a.remember(a.conns[key], cid)
	return p, ""
}

// nodePermissions is permissions for a key that is not one of the
// Authority's own clients; a.mu is held.
func (a *Authority) nodePermissions(key, name, host string, cid uint64) (_ *natsserver.Permissions, why string) {
	if r, ok := a.rejected[key]; ok {
		return nil, fmt.Sprintf("key %s was rejected by the administrator (it connected as node %s)", key, r.NodeID)
	}
	id, isNode := strings.CutPrefix(name, natsbus.NodeClientPrefix)
	if !isNode || !msg.ValidNodeID(id) {
		return nil, fmt.Sprintf("unknown key %s, and not a node (connection name %q, want \"saint-node <id>\")", key, name)
	}
	if why := a.enrolmentRefusal(id, key); why != "" {
		return nil, why
	}
	for other, g := range a.grants {
		if g.Key == key && other != id {
			return nil, fmt.Sprintf("key %s is adopted as node %s, not %s", key, other, id)
		}
	}
	if g, ok := a.grants[id]; ok {
		if g.Key != key {
			return nil, fmt.Sprintf("node %s is adopted with another key than %s (reset it on the server to adopt it anew)", id, key)
		}
		return rolePermissions(a.subjects, id, g.Role, g.Instance), ""
	}
	if _, enrolled := a.enrolled[id]; !enrolled && a.o.RequireEnrolment {
		return nil, fmt.Sprintf("node %s is not enrolled and the server requires enrolment (key %s refused): flash it with enrolment (flash_node.sh)", id, key)
	}
	if why := a.enrol(id, key, host, cid); why != "" {
		return nil, why
	}
	return unadoptedPermissions(a.subjects, id), ""
}

// enrol records key as the one unadopted node id connects with, from
// host; a.mu is held. An id is held by its key while that key has a
// connection open: another key connecting under it is refused, so the key
// the adopt page shows is the one that announces under the id. A key
// holds one id: connecting under another moves it. A new id needs a place
// (maxPending, maxPendingPerHost), and a key the server has not seen a
// share of its address's budget (maxNewKeysPerHost per newKeysWindow).
func (a *Authority) enrol(id, key, host string, cid uint64) (why string) {
	p := a.pending[id]
	was := "" // the key that held the id before, once this one takes it
	if p != nil && p.key != key {
		if a.live(p) {
			return fmt.Sprintf("node id %s is connected with another key, %s (key %s refused)", id, p.key, key)
		}
		// A reflashed node, or someone else while the node is away: the
		// adopt page shows the new key, and an adoption binds the key it
		// was shown (Grant).
		was, p = p.key, nil
	}
	// A key the server has seen: the one holding the id, one moving from
	// another id, or the one the node was enrolled with.
	known := p != nil
	if e, ok := a.enrolled[id]; ok && e.Key == key {
		known = true
	}
	for other, q := range a.pending {
		if q.key == key && other != id {
			delete(a.pending, other)
			known = true
		}
	}
	if p == nil {
		if n := a.connectedFrom(host); n >= maxPendingPerHost {
			return fmt.Sprintf("%d unadopted nodes are connected from %s already, the most one address may have (node id %s refused)", n, host, id)
		}
		if !known {
			if why := a.countNewKey(host); why != "" {
				return why + fmt.Sprintf(" (key %s refused as node %s)", key, id)
			}
		}
		if len(a.pending) >= maxPending && !a.evictIdle() {
			return fmt.Sprintf("%d unadopted nodes are connected already, the most the server keeps (node id %s refused)", maxPending, id)
		}
		p = &pendingNode{key: key}
		a.pending[id] = p
		if was != "" {
			a.log.Warn("unadopted node connects with a new key", "node_id", id, "key", key, "was", was, "addr", host)
			delete(a.conns, was)
		}
	}
	p.host, p.seen = host, a.o.Now()
	p.conns = a.remember(p.conns, cid)
	return ""
}

// countNewKey counts a key the server has not seen, brought by host as
// an unadopted node, and says why it is refused when host has brought
// maxNewKeysPerHost already in the current window; a.mu is held.
func (a *Authority) countNewKey(host string) (why string) {
	now := a.o.Now()
	w := a.newKeys[host]
	if w == nil || now.Sub(w.start) >= newKeysWindow {
		if w == nil && len(a.newKeys) >= maxNewKeyHosts {
			a.forgetOldestKeyWindow()
		}
		w = &keyWindow{start: now}
		a.newKeys[host] = w
	}
	if w.n >= maxNewKeysPerHost {
		return fmt.Sprintf("%s brought %d new keys as unadopted nodes since %s, the most one address may per %s",
			host, w.n, w.start.UTC().Format(time.TimeOnly), newKeysWindow)
	}
	w.n++
	return ""
}

// forgetOldestKeyWindow makes room in a.newKeys; a.mu is held.
func (a *Authority) forgetOldestKeyWindow() {
	var oldest string
	var at time.Time
	for h, w := range a.newKeys {
		if oldest == "" || w.start.Before(at) {
			oldest, at = h, w.start
		}
	}
	delete(a.newKeys, oldest)
}

// remember adds connection cid to ids, forgetting the connections that
// have closed; a.mu is held. Without a broker attached it keeps the last
// maxConnsPerKey.
func (a *Authority) remember(ids []uint64, cid uint64) []uint64 {
	if a.ns == nil {
		ids = append(ids, cid)
		if len(ids) > maxConnsPerKey {
			ids = ids[len(ids)-maxConnsPerKey:]
		}
		return ids
	}
	live := ids[:0]
	for _, id := range ids {
		if a.ns.GetClient(id) != nil {
			live = append(live, id)
		}
	}
	return append(live, cid)
}

// live reports whether unadopted node p has a connection open under its
// id; a.mu is held. Without a broker attached, none has.
func (a *Authority) live(p *pendingNode) bool {
	if a.ns == nil {
		return false
	}
	for _, cid := range p.conns {
		if a.ns.GetClient(cid) != nil {
			return true
		}
	}
	return false
}

// connectedFrom counts the unadopted ids with a connection open whose
// last connection came from host; a.mu is held.
func (a *Authority) connectedFrom(host string) int {
	n := 0
	for _, p := range a.pending {
		if p.host == host && a.live(p) {
			n++
		}
	}
	return n
}

// evictIdle forgets the unadopted id seen least recently that has no
// connection open, and reports whether there was one; a.mu is held.
func (a *Authority) evictIdle() bool {
	var oldest string
	var at time.Time
	for id, p := range a.pending {
		if (oldest == "" || p.seen.Before(at)) && !a.live(p) {
			oldest, at = id, p.seen
		}
	}
	if oldest == "" {
		return false
	}
	a.log.Debug("unadopted node forgotten to make room", "node_id", oldest, "key", a.pending[oldest].key)
	delete(a.conns, a.pending[oldest].key)
	delete(a.pending, oldest)
	return true
}

// Grant adopts node id's key into role (instance) and reconnects it under
// the new permissions. key is the public key the administrator was shown
// for the node; unless it is "", the grant is refused when the node now
// connects with another (so a key swapped in between is not adopted).
func (a *Authority) Grant(id, role, instance, key string) error {
	a.mu.Lock()
	cur := ""
	if p := a.pending[id]; p != nil {
		cur = p.key
	} else if g, ok := a.grants[id]; ok {
		cur = g.Key
	}
	if cur == "" {
		a.mu.Unlock()
		return fmt.Errorf("busaccess: node %s has not connected with a key", id)
	}
	if key != "" && key != cur {
		a.mu.Unlock()
		return fmt.Errorf("%w: node %s connects with %s, not the %s shown for it", ErrKeyChanged, id, cur, key)
	}
	key = cur
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

// ErrKeyChanged is Grant's error when the node no longer connects with the
// key the administrator was shown.
var ErrKeyChanged = errors.New("busaccess: the node's bus key changed")

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
	a.pending[id] = &pendingNode{key: g.Key, seen: a.o.Now()}
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
	if p := a.pending[id]; p != nil {
		return p.key
	}
	return ""
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

// remoteHost is the client's source address without its port, which
// changes with every connection.
func remoteHost(c natsserver.ClientAuthentication) string {
	addr := c.RemoteAddress()
	if addr == nil {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		return host
	}
	return addr.String()
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

// Reject refuses key from now on, whatever node id it connects under, and
// closes its connections: for a device that took unadopted node id's
// place with a key that is not the one the node logs. key must be the one
// id connects with now (what the adopt page shows), so that a node whose
// key changed in between is not rejected by mistake; an adopted node's key
// cannot be rejected (reset the node first). The rejection is stored and
// survives a restart; Allow lifts it.
func (a *Authority) Reject(id, key string) error {
	a.mu.Lock()
	if !nkeys.IsValidPublicUserKey(key) {
		a.mu.Unlock()
		return fmt.Errorf("%w: %q is not a public user nkey (U…)", ErrNotRejectable, key)
	}
	for other, g := range a.grants {
		if g.Key == key {
			a.mu.Unlock()
			return fmt.Errorf("%w: key %s is adopted as node %s; reset the node first", ErrNotRejectable, key, other)
		}
	}
	p := a.pending[id]
	if p == nil || p.key != key {
		cur := "no key"
		if p != nil {
			cur = "key " + p.key
		}
		a.mu.Unlock()
		return fmt.Errorf("%w: node %s connects with %s, not %s", ErrNotRejectable, id, cur, key)
	}
	a.rejected[key] = &Rejection{Key: key, NodeID: id, RejectedAt: a.o.Now().UTC()}
	if err := a.saveRejected(); err != nil {
		delete(a.rejected, key)
		a.mu.Unlock()
		return fmt.Errorf("busaccess: saving rejected keys: %w", err)
	}
	delete(a.pending, id)
	a.mu.Unlock()
	a.log.Warn("bus: key rejected by the administrator; its connections closed", "node_id", id, "key", key)
	a.reconnect(key)
	return nil
}

// ErrNotRejectable is Reject's error for a key it may not reject.
var ErrNotRejectable = errors.New("busaccess: key not rejected")

// Allow lifts key's rejection; it reports whether key was rejected.
func (a *Authority) Allow(key string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rejected[key]
	if !ok {
		return false, nil
	}
	delete(a.rejected, key)
	if err := a.saveRejected(); err != nil {
		a.rejected[key] = r
		return false, fmt.Errorf("busaccess: saving rejected keys: %w", err)
	}
	a.log.Info("bus: key allowed again", "key", key, "node_id", r.NodeID)
	return true, nil
}

// Rejected lists the rejected keys, oldest first.
func (a *Authority) Rejected() []Rejection {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Rejection, 0, len(a.rejected))
	for _, r := range a.rejected {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].RejectedAt.Before(out[j].RejectedAt) || (out[i].RejectedAt.Equal(out[j].RejectedAt) && out[i].Key < out[j].Key)
	})
	return out
}

func (a *Authority) rejectedPath() string { return filepath.Join(a.o.Dir, rejectedFile) }

// loadRejected reads the rejected keys. A damaged file is an error, left
// where it is for the administrator to fix: the keys it holds would
// otherwise connect again, so the server does not start on it.
func (a *Authority) loadRejected() error {
	var list []*Rejection
	found, err := persist.ReadJSON(a.rejectedPath(), &list)
	if !found {
		return nil
	}
	if err != nil {
		// null and empty too: a file that lists nothing is written "[]".
		return fmt.Errorf("busaccess: %w (the keys it lists would be let in again: fix or remove it)", err)
	}
	for i, r := range list {
		if r == nil || !nkeys.IsValidPublicUserKey(r.Key) {
			return fmt.Errorf("busaccess: %s: entry %d: key: want a public user nkey (U…)", a.rejectedPath(), i)
		}
		a.rejected[r.Key] = r
	}
	return nil
}

// saveRejected writes the rejected keys; a.mu is held.
func (a *Authority) saveRejected() error {
	list := make([]*Rejection, 0, len(a.rejected))
	for _, r := range a.rejected {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return persist.WriteFile(a.rejectedPath(), data, 0o600)
}
