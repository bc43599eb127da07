// Package ddstest is a fake of the bridge's DDS participant: writers
// record what they write, and Inject hands bytes to the readers of a
// topic as if a remote DDS writer had sent them.
package ddstest

import (
	"fmt"
	"sort"
	"sync"

	"github.com/saint-os/saint/ros2/bridge"
)

// DDS is a fake participant. The zero value is not ready; use New.
type DDS struct {
	mu      sync.Mutex
	types   map[string]string // topic → type name
	qos     map[string]bridge.QoS
	written map[string][][]byte
	readers map[string][]func([]byte)
	notify  chan string
}

// New returns an empty fake.
func New() *DDS {
	return &DDS{types: map[string]string{}, qos: map[string]bridge.QoS{}, written: map[string][][]byte{}, readers: map[string][]func([]byte){},
		notify: make(chan string, 1024)}
}

var _ bridge.DDS = (*DDS)(nil)

func (d *DDS) topic(name, typeName string) error {
	if t, ok := d.types[name]; ok && t != typeName {
		return fmt.Errorf("ddstest: topic %s has type %s, not %s", name, t, typeName)
	}
	d.types[name] = typeName
	return nil
}

// NewWriter implements bridge.DDS.
func (d *DDS) NewWriter(topic, typeName string, q bridge.QoS) (bridge.Writer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.topic(topic, typeName); err != nil {
		return nil, err
	}
	d.qos[topic] = q
	return writer{d, topic}, nil
}

// NewReader implements bridge.DDS.
func (d *DDS) NewReader(topic, typeName string, q bridge.QoS, fn func([]byte)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.topic(topic, typeName); err != nil {
		return err
	}
	d.qos[topic] = q
	d.readers[topic] = append(d.readers[topic], fn)
	return nil
}

type writer struct {
	d     *DDS
	topic string
}

func (w writer) Write(cdr []byte) error {
	w.d.mu.Lock()
	w.d.written[w.topic] = append(w.d.written[w.topic], append([]byte(nil), cdr...))
	w.d.mu.Unlock()
	select {
	case w.d.notify <- w.topic:
	default:
	}
	return nil
}

// Type is the DDS type of topic, "" if nothing uses it.
func (d *DDS) Type(topic string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.types[topic]
}

// QoS is the QoS of the last writer or reader made on topic.
func (d *DDS) QoS(topic string) bridge.QoS {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.qos[topic]
}

// Written returns what was written on topic so far.
func (d *DDS) Written(topic string) [][]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][]byte(nil), d.written[topic]...)
}

// Inject delivers cdr to topic's readers and reports how many there were.
func (d *DDS) Inject(topic string, cdr []byte) int {
	d.mu.Lock()
	fns := append([]func([]byte){}, d.readers[topic]...)
	d.mu.Unlock()
	for _, fn := range fns {
		fn(cdr)
	}
	return len(fns)
}

// Topics lists every DDS topic a writer or reader was made for, sorted.
func (d *DDS) Topics() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.types))
	for t := range d.types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
