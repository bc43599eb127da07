package bus

import (
	"reflect"
	"slices"
	"sync"

	"github.com/saint-os/saint/hal/executor"
)

// Stats counts what a subscription or served service has seen. Received =
// Dropped + Handled + (messages queued or in their handler).
type Stats struct {
	// Received is how many messages (or requests) the transport delivered.
	Received uint64
	// Dropped is how many were pushed out of a full keep-last queue before
	// their handler ran; for a service, how many requests were refused
	// because too many were waiting.
	Dropped uint64
	// Handled is how many the handler has finished with.
	Handled uint64
	// DecodeErrors is how many SubscribeJSON or ServeJSON could not decode
	// (always 0 for raw handlers).
	DecodeErrors uint64
}

// StatsReporter is implemented by every Subscription this package returns,
// for diagnostics and for tests that must know a message has arrived
// without running the subscriber's executor.
type StatsReporter interface {
	Stats() Stats
}

// SubscriptionStats returns s's counters, or false if s does not count.
func SubscriptionStats(s Subscription) (Stats, bool) {
	r, ok := s.(StatsReporter)
	if !ok {
		return Stats{}, false
	}
	return r.Stats(), true
}

// item is a queued message with the reply subject it came with.
type item struct {
	msg   Msg
	reply string
}

// ring is a fixed-capacity FIFO of items.
type ring struct {
	buf  []item
	head int
	n    int
}

func (r *ring) push(it item) {
	r.buf[(r.head+r.n)%len(r.buf)] = it
	r.n++
}

func (r *ring) pop() item {
	it := r.buf[r.head]
	r.buf[r.head] = item{} // let the payload be collected
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return it
}

func (r *ring) clear() {
	clear(r.buf)
	r.head, r.n = 0, 0
}

// queue is the subscriber side of one subscription or served service: it
// takes messages from the transport on any goroutine, keeps at most depth of
// them, and hands them one at a time to its handler on the executor.
//
// At most one drain callback is posted at a time, and each handles a single
// message and then posts the next: a backlog on one topic therefore
// interleaves with the executor's other events (timers, other topics)
// instead of holding the loop, and a subscriber whose executor is stalled
// holds depth messages, not a growing list of posted closures.
type queue struct {
	c        *Conn
	id       uint64
	name     string                  // topic, filter or service name as given
	wildcard bool                    // name is a filter: take each message's topic from its subject
	typ      reflect.Type            // SubscribeJSON's type, for in-process values; nil for raw handlers
	types    []reflect.Type          // SubscribeValuesOf's types
	wants    func(topic string) bool // SubscribeValuesOfWanted's filter; nil: every message
	ex       *executor.Executor
	handle   func(item)
	// refuse, when set, is called (on the transport's goroutine) for a
	// message that arrives while the queue is full, instead of dropping the
	// oldest. Services use it: a request is answered at once with an error
	// rather than left to time out.
	refuse func(item)
	drainF func() // q.drain, bound once so posting it does not allocate

	mu        sync.Mutex
	ring      ring
	scheduled bool // a drain callback is posted and has not yet finished
	closed    bool
	stats     Stats
	tsub      Subscription // the transport's subscription; set before q is published in c.subs
}

func newQueue(c *Conn, name string, wildcard bool, depth int, ex *executor.Executor, handle func(item)) *queue {
	q := &queue{
		c:        c,
		name:     name,
		wildcard: wildcard,
		ex:       ex,
		handle:   handle,
		ring:     ring{buf: make([]item, depth)},
	}
	q.drainF = q.drain
	return q
}

// deliver is the queue's DeliverFunc.
func (q *queue) deliver(subject, reply string, data []byte) {
	topic, ok := q.want(subject)
	if !ok {
		return
	}
	q.push(topic, item{msg: Msg{Data: data}, reply: reply})
}

// want returns the topic a message on subject arrives on, and whether
// the subscriber wants it (q.wants), before anything is copied.
func (q *queue) want(subject string) (string, bool) {
	topic := q.name
	if q.wildcard {
		topic = SubjectTopic(subject)
	}
	return topic, q.wants == nil || q.wants(topic)
}

// deliverValue takes a publication made in process: a copy of the value
// if the subscriber decodes into its type, else its JSON.
func (q *queue) deliverValue(subject string, p *Publication) {
	topic, ok := q.want(subject)
	if !ok {
		return
	}
	t := q.typ
	switch t {
	case reflect.TypeFor[valuesMarker]():
		t = reflect.TypeOf(p.v)
	case reflect.TypeFor[typesMarker]():
		if vt := reflect.TypeOf(p.v); slices.Contains(q.types, vt) {
			t = vt
		}
	}
	if v, ok := p.copyAs(t); ok {
		q.push(topic, item{msg: Msg{val: v}})
		return
	}
	data, err := p.JSON()
	if err != nil {
		return // PublishValue prepared p: not reached
	}
	q.push(topic, item{msg: Msg{Data: data}})
}

// push queues it, a message that arrived on topic.
func (q *queue) push(topic string, it item) {
	it.msg.Topic = topic
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.stats.Received++
	if q.ring.n == len(q.ring.buf) {
		q.stats.Dropped++
		if q.refuse != nil {
			q.mu.Unlock()
			q.refuse(it)
			return
		}
		q.ring.pop()
	}
	q.ring.push(it)
	post := !q.scheduled
	q.scheduled = true
	q.mu.Unlock()
	if post {
		q.ex.Post(q.drainF)
	}
}

// drain runs on the executor: it handles the oldest queued message and, if
// more wait, posts itself again.
func (q *queue) drain() {
	q.mu.Lock()
	if q.closed || q.ring.n == 0 {
		q.scheduled = false
		q.mu.Unlock()
		return
	}
	it := q.ring.pop()
	q.mu.Unlock()

	q.handle(it)

	q.mu.Lock()
	// Counted once the handler has returned, so a reader that sees Handled
	// also sees what the handler did.
	q.stats.Handled++
	again := !q.closed && q.ring.n > 0
	q.scheduled = again
	q.mu.Unlock()
	if again {
		q.ex.Post(q.drainF)
	}
}

// Stats implements StatsReporter.
func (q *queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats
}

// Unsubscribe implements Subscription. Messages still queued are discarded;
// called on the subscriber's executor it guarantees the handler does not
// run again. Unsubscribing twice, or after the Conn closed, is a no-op.
func (q *queue) Unsubscribe() error {
	if !q.shut() {
		return nil
	}
	q.c.forget(q)
	return q.tsub.Unsubscribe()
}

// shut marks the queue closed and empties it; it reports whether it was
// open.
func (q *queue) shut() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	q.ring.clear()
	return true
}
