package mem

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/bus"
)

// Bus is a connection to a Broker; it implements bus.Bus. Closing it ends
// its own subscriptions, services and calls, not those of other
// connections to the same broker.
type Bus struct {
	*bus.Conn
	br *Broker
}

// New returns a connection to a new broker.
func New() *Bus { return NewBroker().Connect(nil) }

// Broker returns the broker b is connected to, for connecting more
// "processes" to it.
func (b *Bus) Broker() *Broker { return b.br }

// Broker is the in-process switch that connections share. It keeps every
// subscription in the order it was made and delivers a publication to the
// matching ones in that order, synchronously, on the publisher's goroutine.
// It never reads a clock.
type Broker struct {
	mu      sync.Mutex
	nextID  uint64
	literal map[string][]*sub // subscriptions without wildcards, by subject
	wild    []*sub            // subscriptions with wildcards
	inboxes map[string]*request
	// matched caches match's result by subject until the subscriptions
	// change; its slices are never modified, so callers share them.
	matched map[string][]*sub
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{
		literal: make(map[string][]*sub),
		inboxes: make(map[string]*request),
		matched: make(map[string][]*sub),
	}
}

// Connect returns a new connection to br, configured by opts (nil means
// defaults).
func (br *Broker) Connect(opts *bus.Options) *Bus {
	t := &transport{br: br, subs: make(map[uint64]*sub), inboxes: make(map[string]struct{})}
	return &Bus{Conn: bus.NewConn(t, opts), br: br}
}

// sub is one transport subscription.
type sub struct {
	id      uint64
	t       *transport
	subject string
	tokens  []string // set for wildcard patterns only
	deliver bus.DeliverFunc
	value   func(subject string, p *bus.Publication) // SubscribeValue's; nil for byte subscribers
}

// request is a pending request, keyed in the broker by its inbox subject.
type request struct {
	t    *transport
	done func([]byte, error)
}

// transport is one connection's bus.Transport. Its subscriptions and
// inboxes live in the broker (under br.mu); it remembers which are its own
// so that Close can remove them.
type transport struct {
	br      *Broker
	closed  bool
	subs    map[uint64]*sub
	inboxes map[string]struct{}
}

var (
	_ bus.Transport = (*transport)(nil)
	_ bus.InProcess = (*transport)(nil)
)

// Publish implements bus.Transport. Every matching subscriber's deliver has
// run by the time it returns, so publications made from one executor
// callback are queued in publish order.
func (t *transport) Publish(subject, reply string, data []byte) error {
	br := t.br
	br.mu.Lock()
	if t.closed {
		br.mu.Unlock()
		return bus.ErrClosed
	}
	if r, ok := br.inboxes[subject]; ok {
		// A reply: the first one completes the request, later ones (a
		// second server of the same service) find the inbox gone.
		delete(br.inboxes, subject)
		delete(r.t.inboxes, subject)
		br.mu.Unlock()
		r.done(data, nil)
		return nil
	}
	subs := br.match(subject)
	br.mu.Unlock()
	// Deliver outside the lock: a deliver function may publish (a service
	// refusing a request replies at once).
	for _, s := range subs {
		s.deliver(subject, reply, data)
	}
	return nil
}

// PublishValue implements bus.InProcess: values go to the subscribers
// that copy them, JSON (encoded once) to the others, in subscription order
// as with Publish. A value that cannot be encoded reaches nobody, whether
// or not anyone subscribes, as with Publish.
func (t *transport) PublishValue(subject string, p *bus.Publication) error {
	br := t.br
	br.mu.Lock()
	if t.closed {
		br.mu.Unlock()
		return bus.ErrClosed
	}
	subs := br.match(subject)
	br.mu.Unlock()
	raw := false
	for _, s := range subs {
		raw = raw || s.value == nil
	}
	if err := p.Prepare(raw); err != nil {
		return err
	}
	var data []byte
	if raw {
		data, _ = p.JSON()
	}
	for _, s := range subs {
		if s.value != nil {
			s.value(subject, p)
		} else {
			s.deliver(subject, "", data)
		}
	}
	return nil
}

// Subscribe implements bus.Transport. The subscription is in effect when it
// returns.
func (t *transport) Subscribe(pattern string, deliver bus.DeliverFunc) (bus.Subscription, error) {
	return t.SubscribeValue(pattern, deliver, nil)
}

// SubscribeValue implements bus.InProcess.
func (t *transport) SubscribeValue(pattern string, deliver bus.DeliverFunc, value func(string, *bus.Publication)) (bus.Subscription, error) {
	br := t.br
	br.mu.Lock()
	defer br.mu.Unlock()
	if t.closed {
		return nil, bus.ErrClosed
	}
	br.nextID++
	s := &sub{id: br.nextID, t: t, subject: pattern, deliver: deliver, value: value}
	if isWild(pattern) {
		s.tokens = strings.Split(pattern, ".")
		br.wild = append(br.wild, s)
	} else {
		br.literal[pattern] = append(br.literal[pattern], s)
	}
	clear(br.matched)
	t.subs[s.id] = s
	return s, nil
}

// Unsubscribe implements bus.Subscription.
func (s *sub) Unsubscribe() error {
	br := s.t.br
	br.mu.Lock()
	br.remove(s)
	br.mu.Unlock()
	return nil
}

// Request implements bus.Transport. With no subscriber done gets
// bus.ErrNoResponders before Request returns; otherwise the request is
// delivered like a publication, with a fresh inbox as its reply subject.
// The broker keeps no clock, so timeout is ignored: the caller's executor
// times the request and cancels it.
func (t *transport) Request(subject string, data []byte, timeout time.Duration, done func([]byte, error)) (func(), error) {
	br := t.br
	br.mu.Lock()
	if t.closed {
		br.mu.Unlock()
		return nil, bus.ErrClosed
	}
	subs := br.match(subject)
	if len(subs) == 0 {
		br.mu.Unlock()
		done(nil, bus.ErrNoResponders)
		return func() {}, nil
	}
	br.nextID++
	inbox := "_INBOX." + strconv.FormatUint(br.nextID, 10)
	br.inboxes[inbox] = &request{t: t, done: done}
	t.inboxes[inbox] = struct{}{}
	br.mu.Unlock()

	for _, s := range subs {
		s.deliver(subject, inbox, data)
	}
	return func() {
		br.mu.Lock()
		delete(br.inboxes, inbox)
		delete(t.inboxes, inbox)
		br.mu.Unlock()
	}, nil
}

// Close implements bus.Transport.
func (t *transport) Close() error {
	br := t.br
	br.mu.Lock()
	defer br.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	for _, s := range t.subs {
		br.remove(s)
	}
	for inbox := range t.inboxes {
		delete(br.inboxes, inbox)
	}
	clear(t.inboxes)
	return nil
}

// remove drops s; br.mu must be held. Removing twice is harmless.
func (br *Broker) remove(s *sub) {
	clear(br.matched)
	delete(s.t.subs, s.id)
	del := func(x *sub) bool { return x == s }
	if s.tokens != nil {
		br.wild = slices.DeleteFunc(br.wild, del)
		return
	}
	list := slices.DeleteFunc(br.literal[s.subject], del)
	if len(list) == 0 {
		delete(br.literal, s.subject)
	} else {
		br.literal[s.subject] = list
	}
}

// maxMatched bounds the match cache.
const maxMatched = 4096

// match returns the subscriptions matching subject in subscription order;
// br.mu must be held. The result is safe to use unlocked and must not be
// modified: it is cached until the subscriptions change.
func (br *Broker) match(subject string) []*sub {
	if m, ok := br.matched[subject]; ok {
		return m
	}
	m := br.matchAll(subject)
	if len(br.matched) >= maxMatched {
		clear(br.matched) // a program publishing to ever new subjects
	}
	br.matched[subject] = m
	return m
}

func (br *Broker) matchAll(subject string) []*sub {
	lit := br.literal[subject]
	if len(br.wild) == 0 {
		return slices.Clone(lit)
	}
	tokens := strings.Split(subject, ".")
	out := make([]*sub, 0, len(lit)+1)
	i := 0
	for _, w := range br.wild {
		if !matchTokens(w.tokens, tokens) {
			continue
		}
		// Both lists are in id order: merge.
		for i < len(lit) && lit[i].id < w.id {
			out = append(out, lit[i])
			i++
		}
		out = append(out, w)
	}
	return append(out, lit[i:]...)
}

// matchTokens reports whether a subject matches a pattern, NATS-style: "*"
// matches one token, a final ">" one or more.
func matchTokens(pattern, subject []string) bool {
	for i, p := range pattern {
		if p == ">" {
			return len(subject) > i
		}
		if i >= len(subject) || p != "*" && p != subject[i] {
			return false
		}
	}
	return len(pattern) == len(subject)
}

// isWild reports whether a subject pattern has a wildcard token.
func isWild(pattern string) bool {
	for _, tok := range strings.Split(pattern, ".") {
		if tok == "*" || tok == ">" {
			return true
		}
	}
	return false
}

var _ bus.Bus = (*Bus)(nil)
