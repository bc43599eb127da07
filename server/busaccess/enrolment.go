package busaccess

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/persist"
)

// enrolledFile keeps the enrolments, in the Authority's directory.
const enrolledFile = "enrolled.json"

// Enrolment is a node's key registered with the server before the node's
// first boot (saintctl nodes enrol, flash_node.sh): from then on the node
// id connects with that key only, and the key under that id only.
type Enrolment struct {
	NodeID     string    `json:"node_id"`
	Key        string    `json:"key"` // the node's public nkey, "U..."
	EnrolledAt time.Time `json:"enrolled_at"`
}

// ErrNotEnrolable is Enrol's error for an enrolment it refuses.
var ErrNotEnrolable = errors.New("busaccess: node not enrolled")

// Enrol registers key as node id's, before the node first connects. An id
// enrolled again with a new key (a node flashed anew) forgets the old key;
// the same key again changes nothing. A device connected under id with
// another key is disconnected, and refused from then on. Refused: a key
// that is not a public user nkey, one of the server's own keys, a rejected
// key, a key enrolled or adopted under another id, and an id adopted with
// another key (reset the node first).
func (a *Authority) Enrol(id, key string) error {
	if !msg.ValidNodeID(id) {
		return fmt.Errorf("%w: node id %q: want 1-64 letters, digits, '-' or '_'", ErrNotEnrolable, id)
	}
	if !nkeys.IsValidPublicUserKey(key) {
		return fmt.Errorf("%w: %q is not a public user nkey (U…)", ErrNotEnrolable, key)
	}
	a.mu.Lock()
	if why := a.enrolProblem(id, key); why != "" {
		a.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotEnrolable, why)
	}
	prev := a.enrolled[id]
	if prev != nil && prev.Key == key {
		a.mu.Unlock()
		return nil
	}
	a.enrolled[id] = &Enrolment{NodeID: id, Key: key, EnrolledAt: a.o.Now().UTC()}
	if err := a.saveEnrolled(); err != nil {
		if prev != nil {
			a.enrolled[id] = prev
		} else {
			delete(a.enrolled, id)
		}
		a.mu.Unlock()
		return fmt.Errorf("busaccess: saving enrolments: %w", err)
	}
	var shutOut []string
	if prev != nil {
		shutOut = append(shutOut, prev.Key)
	}
	if p := a.pending[id]; p != nil && p.key != key {
		// Whoever holds the id now is not the enrolled node.
		shutOut = append(shutOut, p.key)
		delete(a.pending, id)
	}
	for other, q := range a.pending {
		if q.key == key && other != id {
			// The key connected under another id before: it comes back
			// under its own.
			shutOut = append(shutOut, key)
			delete(a.pending, other)
		}
	}
	a.mu.Unlock()
	a.log.Info("bus: node enrolled", "node_id", id, "key", key)
	for _, k := range shutOut {
		a.reconnect(k)
	}
	return nil
}

// enrolProblem says why key may not be enrolled as id, or ""; a.mu is held.
func (a *Authority) enrolProblem(id, key string) string {
	if _, ok := a.clients[key]; ok {
		return fmt.Sprintf("key %s is one of the server's own keys", key)
	}
	if _, ok := a.rejected[key]; ok {
		return fmt.Sprintf("key %s was rejected by the administrator (allow_node_key lifts that)", key)
	}
	for other, e := range a.enrolled {
		if e.Key == key && other != id {
			return fmt.Sprintf("key %s is enrolled as node %s", key, other)
		}
	}
	for other, g := range a.grants {
		if g.Key == key && other != id {
			return fmt.Sprintf("key %s is adopted as node %s", key, other)
		}
	}
	if g, ok := a.grants[id]; ok && g.Key != key {
		return fmt.Sprintf("node %s is adopted with another key, %s; reset it on the server before enrolling a new key", id, g.Key)
	}
	return ""
}

// Unenrol forgets node id's enrolment (a node taken out of the robot); it
// reports whether there was one. An adoption stays as it is.
func (a *Authority) Unenrol(id string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.enrolled[id]
	if !ok {
		return false, nil
	}
	delete(a.enrolled, id)
	if err := a.saveEnrolled(); err != nil {
		a.enrolled[id] = e
		return false, fmt.Errorf("busaccess: saving enrolments: %w", err)
	}
	a.log.Info("bus: node's enrolment removed", "node_id", id, "key", e.Key)
	return true, nil
}

// Enrolled reports whether key is the key node id was enrolled with.
func (a *Authority) Enrolled(id, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.enrolled[id]
	return ok && e.Key == key
}

// Enrolments lists the enrolled nodes by id.
func (a *Authority) Enrolments() []Enrolment {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.enrolmentList()
}

// enrolmentList is the enrolments by id; a.mu is held.
func (a *Authority) enrolmentList() []Enrolment {
	out := make([]Enrolment, 0, len(a.enrolled))
	for _, e := range a.enrolled {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out
}

// enrolmentRefusal says why node id may not connect with key because of
// the enrolments, or ""; a.mu is held.
func (a *Authority) enrolmentRefusal(id, key string) string {
	for other, e := range a.enrolled {
		if e.Key == key && other != id {
			return fmt.Sprintf("key %s is enrolled as node %s, not %s", key, other, id)
		}
	}
	if e, ok := a.enrolled[id]; ok && e.Key != key {
		return fmt.Sprintf("node %s is enrolled with key %s (key %s refused); a node flashed anew is enrolled again by flash_node.sh", id, e.Key, key)
	}
	return ""
}

// noteUnenrolled reports, for the activity log, a node connecting with a
// key that was not enrolled while the robot's nodes are enrolled: a node
// that trusted the first server it met (--trust-first-server), or a device
// that is not the robot's. One event per source address per minute, with
// the count.
func (a *Authority) noteUnenrolled(key, name, host string) {
	id, isNode := strings.CutPrefix(name, natsbus.NodeClientPrefix)
	a.mu.Lock()
	_, client := a.clients[key]
	_, enrolled := a.enrolled[id]
	_, granted := a.grants[id]
	inUse := len(a.enrolled) > 0
	unenrolled := a.unenrolled
	a.mu.Unlock()
	if !isNode || client || enrolled || granted || !inUse {
		return
	}
	unenrolled.Record(host, a.o.Now(), fmt.Sprintf("node %s connected from %s with key %s, which was not enrolled: it trusted the first server it met (--trust-first-server) or is not one of the robot's nodes; compare the key with the one the node prints before adopting it", id, host, key),
		"node", id)
}

func (a *Authority) enrolledPath() string { return filepath.Join(a.o.Dir, enrolledFile) }

// loadEnrolled reads the enrolments. A damaged file (empty, null,
// truncated, garbled, or an entry that is not an id and a key) is an
// error, left where it is for the administrator: the ids it lists would
// otherwise be open to any key, so the server does not start on it.
func (a *Authority) loadEnrolled() error {
	damaged := func(why string) error {
		return fmt.Errorf("busaccess: %s is damaged: %s (the nodes it enrols would be open to any key: restore it, or remove it and enrol the nodes again)", a.enrolledPath(), why)
	}
	var list []*Enrolment
	found, err := persist.ReadJSON(a.enrolledPath(), &list)
	if !found {
		return nil
	}
	if errors.Is(err, persist.ErrDamaged) {
		return damaged(errors.Unwrap(err).Error())
	}
	if err != nil {
		return fmt.Errorf("busaccess: %w", err)
	}
	keys := map[string]string{}
	for i, e := range list {
		switch {
		case e == nil:
			return damaged(fmt.Sprintf("entry %d is null", i))
		case !msg.ValidNodeID(e.NodeID):
			return damaged(fmt.Sprintf("entry %d: node_id %q is not a node id", i, e.NodeID))
		case !nkeys.IsValidPublicUserKey(e.Key):
			return damaged(fmt.Sprintf("entry %d: key: want a public user nkey (U…)", i))
		case a.enrolled[e.NodeID] != nil:
			return damaged(fmt.Sprintf("entry %d: node %s is enrolled twice", i, e.NodeID))
		case keys[e.Key] != "":
			return damaged(fmt.Sprintf("entry %d: key %s is enrolled as %s and %s", i, e.Key, keys[e.Key], e.NodeID))
		}
		keys[e.Key] = e.NodeID
		a.enrolled[e.NodeID] = e
	}
	return nil
}

// saveEnrolled writes the enrolments; a.mu is held.
func (a *Authority) saveEnrolled() error {
	data, err := json.MarshalIndent(a.enrolmentList(), "", "  ")
	if err != nil {
		return err
	}
	return persist.WriteFile(a.enrolledPath(), data, 0o600)
}
