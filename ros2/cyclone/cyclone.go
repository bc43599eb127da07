package cyclone

/*
#cgo LDFLAGS: -lddsc
#include <stdlib.h>
#include <string.h>
#include "dds/dds.h"
#include "dds/ddsi/ddsi_cdrstream.h"
#include "descriptors.h"
#include "typeguard.h"

#define SAINT_XCDR1 1

static dds_entity_t saint_topic(dds_entity_t pp, const char *type_name, const char *topic) {
	const dds_topic_descriptor_t *d = saint_descriptor(type_name);
	if (d == NULL) {
		return DDS_RETCODE_BAD_PARAMETER;
	}
	return dds_create_topic(pp, d, topic, NULL, NULL);
}

static dds_qos_t *saint_qos(int reliable, int depth, int transient_local) {
	dds_qos_t *q = dds_create_qos();
	if (reliable) {
		dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
	} else {
		dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
	}
	dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
	dds_qset_durability(q, transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
	return q;
}

// saint_write checks size bytes of XCDR1 (after the encapsulation header)
// against the type, turns them into a sample and writes it.
static dds_return_t saint_write(dds_entity_t wr, const char *type_name, void *data, uint32_t size, int bswap) {
	const dds_topic_descriptor_t *d = saint_descriptor(type_name);
	if (d == NULL) {
		return DDS_RETCODE_BAD_PARAMETER;
	}
	uint32_t off = 0;
	if (dds_stream_normalize_data(data, &off, size, bswap != 0, SAINT_XCDR1, d->m_ops) == NULL) {
		return DDS_RETCODE_BAD_PARAMETER;
	}
	void *sample = calloc(1, d->m_size);
	if (sample == NULL) {
		return DDS_RETCODE_OUT_OF_RESOURCES;
	}
	dds_istream_t is;
	dds_istream_init(&is, size, data, SAINT_XCDR1);
	dds_stream_read(&is, sample, d->m_ops);
	dds_return_t rc = dds_write(wr, sample);
	dds_stream_free_sample(sample, d->m_ops);
	free(sample);
	return rc;
}

// saint_take takes one sample: 1 with its XCDR1 little-endian bytes in
// *out (free with dds_free), 2 for a sample without data (a disposal),
// 0 when there is none, negative on error.
static int saint_take(dds_entity_t rd, const char *type_name, unsigned char **out, uint32_t *len) {
	const dds_topic_descriptor_t *d = saint_descriptor(type_name);
	if (d == NULL) {
		return DDS_RETCODE_BAD_PARAMETER;
	}
	void *samples[1] = {NULL};
	dds_sample_info_t info;
	int n = dds_take(rd, samples, &info, 1, 1);
	if (n <= 0) {
		return n;
	}
	int rc = 2;
	if (info.valid_data) {
		dds_ostreamLE_t os;
		dds_ostreamLE_init(&os, 0, SAINT_XCDR1);
		dds_stream_writeLE(&os, samples[0], d->m_ops);
		*out = os.x.m_buffer;
		*len = os.x.m_index;
		rc = 1;
	}
	dds_return_loan(rd, samples, n);
	return rc;
}

// saint_participant creates a participant with qos (NULL: the defaults)
// whose USER_DATA is user_data, as ROS 2's middlewares put
// "enclave=/;" there.
static dds_entity_t saint_participant(dds_domainid_t domain, const dds_qos_t *qos, const char *user_data) {
	dds_qos_t *q = dds_create_qos();
	if (qos != NULL) {
		dds_copy_qos(q, qos);
	}
	dds_qset_userdata(q, user_data, strlen(user_data));
	dds_entity_t pp = dds_create_participant(domain, q, NULL);
	dds_delete_qos(q);
	return pp;
}

static dds_return_t saint_wait(dds_entity_t ws, dds_attach_t *xs, size_t n) {
	return dds_waitset_wait(ws, xs, n, DDS_INFINITY);
}

static int32_t saint_matched_readers(dds_entity_t wr) {
	dds_publication_matched_status_t st;
	if (dds_get_publication_matched_status(wr, &st) < 0) {
		return -1;
	}
	return (int32_t)st.current_count;
}

static int32_t saint_matched_writers(dds_entity_t rd) {
	dds_subscription_matched_status_t st;
	if (dds_get_subscription_matched_status(rd, &st) < 0) {
		return -1;
	}
	return (int32_t)st.current_count;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// QoS is the part of a DDS QoS the bridge sets, as ROS 2's profiles use it.
type QoS struct {
	Reliable bool // reliable, or best effort
	Depth    int  // keep-last history depth; 0 means 10
	// TransientLocal keeps the last Depth samples for readers that join
	// later; otherwise volatile.
	TransientLocal bool
}

func (q QoS) c() *C.dds_qos_t {
	depth := q.Depth
	if depth <= 0 {
		depth = 10
	}
	return C.saint_qos(cbool(q.Reliable), C.int(depth), cbool(q.TransientLocal))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func ddsErr(op string, rc C.dds_return_t) error {
	return fmt.Errorf("cyclone: %s: %s", op, C.GoString(C.dds_strretcode(rc)))
}

// Participant is one DDS domain participant with its topics, and one
// goroutine that delivers the samples its readers take.
type Participant struct {
	h       C.dds_entity_t
	ws      C.dds_entity_t
	mu      sync.Mutex
	topics  map[string]C.dds_entity_t // by topic name
	types   map[string]string         // topic name → type name
	readers map[C.dds_attach_t]*Reader
	nextID  C.dds_attach_t
	closed  bool
	done    chan struct{}
	// The GUIDs of the endpoints made, and the node they are announced
	// as (AnnounceNode) once graph is set.
	readerGUIDs, writerGUIDs []GUID
	graph                    *graph
}

// GUID is a DDS entity's globally unique id: the participant's 12-byte
// prefix and the entity's 4-byte id.
type GUID [16]byte

func guidOf(h C.dds_entity_t) (GUID, error) {
	var g C.dds_guid_t
	var out GUID
	if rc := C.dds_get_guid(h, &g); rc < 0 {
		return out, ddsErr("get GUID", rc)
	}
	for i := range out {
		out[i] = byte(g.v[i])
	}
	return out, nil
}

// GUID is the participant's own GUID (entity id 0x000001c1).
func (p *Participant) GUID() (GUID, error) { return guidOf(p.h) }

// hostBigEndian says whether dds_stream_read expects bytes swapped from
// the little-endian ones Encode produces.
var hostBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// UserData is what the participant carries in its USER_DATA QoS, as
// every ROS 2 participant does: its security enclave, "/" when it has
// none (a secure participant names its enclave, Security.Enclave). ROS
// 2's tools read a participant's nodes only from a participant that has
// it.
const UserData = "enclave=/;"

// enclaveUserData is UserData for enclave ("" or "/": the root enclave).
func enclaveUserData(enclave string) string {
	if enclave == "" || enclave == "/" {
		return UserData
	}
	return "enclave=" + enclave + ";"
}

// NewParticipant joins DDS domain domain. It refuses to when the type
// object guard (typeguard.c) is not what libddsc calls: without it any
// peer on the domain could crash the process.
func NewParticipant(domain uint32) (*Participant, error) {
	return newParticipant(domain, nil, UserData)
}

// newParticipant creates the participant with qos (nil: the defaults)
// and userData in its USER_DATA, behind the same type object guard.
func newParticipant(domain uint32, qos *C.dds_qos_t, userData string) (*Participant, error) {
	if !C.saint_typeguard_installed() {
		return nil, errors.New("cyclone: the type object guard is not in place (the executable does not export ddsi_type_add_typeobj to libddsc): a DDS peer with int8/uint8 types could crash this process")
	}
	ud := C.CString(userData)
	defer C.free(unsafe.Pointer(ud))
	h := C.saint_participant(C.dds_domainid_t(domain), qos, ud)
	if h < 0 {
		return nil, ddsErr(fmt.Sprintf("create participant in domain %d (check CYCLONEDDS_URI)", domain), h)
	}
	ws := C.dds_create_waitset(h)
	if ws < 0 {
		C.dds_delete(h)
		return nil, ddsErr("create waitset", ws)
	}
	// The waitset watches its own trigger (Close sets it), so a wait
	// blocks even before any reader is attached.
	if rc := C.dds_waitset_attach(ws, ws, 0); rc < 0 {
		C.dds_delete(h)
		return nil, ddsErr("attach waitset", rc)
	}
	p := &Participant{h: h, ws: ws, topics: map[string]C.dds_entity_t{}, types: map[string]string{},
		readers: map[C.dds_attach_t]*Reader{}, nextID: 1, done: make(chan struct{})}
	go p.loop()
	return p, nil
}

// GUIDPrefix is the participant's GUID prefix, the first 12 bytes of the
// GUID every entity of the participant has: how other participants and
// logs (Cyclone's type guard's "participant=") name it.
func (p *Participant) GUIDPrefix() ([12]byte, error) {
	var g C.dds_guid_t
	var prefix [12]byte
	if rc := C.dds_get_guid(p.h, &g); rc < 0 {
		return prefix, ddsErr("get participant GUID", rc)
	}
	for i := range prefix {
		prefix[i] = byte(g.v[i])
	}
	return prefix, nil
}

// Close deletes the participant and everything it created, and waits
// for the delivering goroutine to end.
func (p *Participant) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	C.dds_waitset_set_trigger(p.ws, true)
	<-p.done
	if rc := C.dds_delete(p.h); rc < 0 {
		return ddsErr("delete participant", rc)
	}
	return nil
}

func (p *Participant) topic(name, typeName string) (C.dds_entity_t, error) {
	if t, ok := p.topics[name]; ok {
		if p.types[name] != typeName {
			return 0, fmt.Errorf("cyclone: topic %s has type %s, not %s", name, p.types[name], typeName)
		}
		return t, nil
	}
	cn, ct := C.CString(name), C.CString(typeName)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(ct))
	t := C.saint_topic(p.h, ct, cn)
	if t < 0 {
		if t == C.DDS_RETCODE_BAD_PARAMETER && C.saint_descriptor(ct) == nil {
			return 0, fmt.Errorf("cyclone: no type support for %s (go generate ./ros2)", typeName)
		}
		return 0, ddsErr("create topic "+name, t)
	}
	p.topics[name] = t
	p.types[name] = typeName
	return t, nil
}

// Writer writes samples of one type on one topic.
type Writer struct {
	h        C.dds_entity_t
	typeName *C.char
	topic    string
	guid     GUID
}

// GUID is the writer's GUID, which ROS 2's graph names it by.
func (w *Writer) GUID() GUID { return w.guid }

// NewWriter creates a writer on topic (the DDS name, "rt/saint/tracks/odom")
// of typeName ("nav_msgs::msg::dds_::Odometry_").
func (p *Participant) NewWriter(topic, typeName string, q QoS) (*Writer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, err := p.newWriter(topic, typeName, q)
	if err != nil {
		return nil, err
	}
	p.writerGUIDs = append(p.writerGUIDs, w.guid)
	p.graphChanged()
	return w, nil
}

func (p *Participant) newWriter(topic, typeName string, q QoS) (*Writer, error) {
	t, err := p.topic(topic, typeName)
	if err != nil {
		return nil, err
	}
	qos := q.c()
	defer C.dds_delete_qos(qos)
	h := C.dds_create_writer(p.h, t, qos, nil)
	if h < 0 {
		return nil, ddsErr("create writer on "+topic, h)
	}
	guid, err := guidOf(h)
	if err != nil {
		C.dds_delete(h)
		return nil, err
	}
	return &Writer{h: h, typeName: C.CString(typeName), topic: topic, guid: guid}, nil
}

// Write writes one sample given as XCDR1 bytes with their encapsulation
// header (ros2.Registry.Encode). Bytes that do not match the type are
// refused.
func (w *Writer) Write(cdr []byte) error {
	if len(cdr) < 4 || cdr[0] != 0 || cdr[1] != 1 {
		return fmt.Errorf("cyclone: write %s: want XCDR1 little-endian bytes", w.topic)
	}
	body := cdr[4:]
	buf := C.CBytes(body)
	defer C.free(buf)
	if rc := C.saint_write(w.h, w.typeName, buf, C.uint32_t(len(body)), cbool(hostBigEndian)); rc < 0 {
		if rc == C.DDS_RETCODE_BAD_PARAMETER {
			return fmt.Errorf("cyclone: write %s: the bytes are not a valid %s", w.topic, C.GoString(w.typeName))
		}
		return ddsErr("write "+w.topic, rc)
	}
	return nil
}

// MatchedReaders is how many readers this writer has matched. (A remote
// reader may not have matched the writer yet when this says it has.)
func (w *Writer) MatchedReaders() int { return int(C.saint_matched_readers(w.h)) }

// Reader takes the samples of one topic and hands them, as XCDR1
// little-endian bytes with their encapsulation header, to its callback on
// the participant's delivering goroutine.
type Reader struct {
	h        C.dds_entity_t
	cond     C.dds_entity_t
	typeName *C.char
	topic    string
	fn       func([]byte)
	guid     GUID
}

// GUID is the reader's GUID, which ROS 2's graph names it by.
func (r *Reader) GUID() GUID { return r.guid }

// NewReader creates a reader on topic of typeName; fn gets every sample.
func (p *Participant) NewReader(topic, typeName string, q QoS, fn func(cdr []byte)) (*Reader, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, err := p.topic(topic, typeName)
	if err != nil {
		return nil, err
	}
	qos := q.c()
	defer C.dds_delete_qos(qos)
	h := C.dds_create_reader(p.h, t, qos, nil)
	if h < 0 {
		return nil, ddsErr("create reader on "+topic, h)
	}
	cond := C.dds_create_readcondition(h, C.DDS_ANY_STATE)
	if cond < 0 {
		C.dds_delete(h)
		return nil, ddsErr("create read condition on "+topic, cond)
	}
	guid, err := guidOf(h)
	if err != nil {
		C.dds_delete(h)
		return nil, err
	}
	r := &Reader{h: h, cond: cond, typeName: C.CString(typeName), topic: topic, fn: fn, guid: guid}
	id := p.nextID
	p.nextID++
	if rc := C.dds_waitset_attach(p.ws, cond, id); rc < 0 {
		C.dds_delete(h)
		return nil, ddsErr("attach reader on "+topic, rc)
	}
	p.readers[id] = r
	p.readerGUIDs = append(p.readerGUIDs, guid)
	p.graphChanged()
	return r, nil
}

// MatchedWriters is how many writers this reader has matched.
func (r *Reader) MatchedWriters() int { return int(C.saint_matched_writers(r.h)) }

func (p *Participant) loop() {
	defer close(p.done)
	xs := make([]C.dds_attach_t, 64)
	for {
		n := C.saint_wait(p.ws, &xs[0], C.size_t(len(xs)))
		p.mu.Lock()
		closed := p.closed
		var ready []*Reader
		for i := 0; i < int(n) && i < len(xs); i++ {
			if r, ok := p.readers[xs[i]]; ok {
				ready = append(ready, r)
			}
		}
		p.mu.Unlock()
		if closed {
			return
		}
		if n < 0 {
			continue
		}
		for _, r := range ready {
			r.drain()
		}
	}
}

func (r *Reader) drain() {
	for {
		var out *C.uchar
		var n C.uint32_t
		rc := C.saint_take(r.h, r.typeName, &out, &n)
		if rc <= 0 {
			return
		}
		if rc != 1 {
			continue
		}
		data := make([]byte, 4+int(n))
		data[1] = 1 // CDR_LE
		copy(data[4:], unsafe.Slice((*byte)(unsafe.Pointer(out)), int(n)))
		C.dds_free(unsafe.Pointer(out))
		r.fn(data)
	}
}
