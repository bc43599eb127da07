package feetech

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart"
)

// DefaultBaud is the servos' factory line rate.
const DefaultBaud = 1_000_000

// DefaultTimeout is how long a transaction waits for its status packet. A
// servo answers within its return delay (≤ 0.5 ms by default); a status
// packet of a few bytes takes well under a millisecond at 1 Mbaud.
const DefaultTimeout = 20 * time.Millisecond

// Options configures a Bus. The zero value of each field means its default.
type Options struct {
	// Model is the servo family on the bus (STS by default).
	Model Model
	// Baud is the line rate; 0 means DefaultBaud.
	Baud int
	// Timeout is how long to wait for a status packet; 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// ErrTimeout is returned when a servo does not answer in time.
var ErrTimeout = errors.New("feetech: no answer")

// ErrClosed is returned for transactions after Close.
var ErrClosed = errors.New("feetech: bus closed")

// StatusError is a status packet whose error byte is not zero. The data of a
// READ that carries it is still returned: the servo reports a fault, not a
// failed read.
type StatusError struct {
	ID   uint8
	Bits uint8
}

func (e *StatusError) Error() string {
	var names []string
	for _, f := range []struct {
		bit  uint8
		name string
	}{{ErrVoltage, "voltage"}, {ErrAngle, "angle"}, {ErrOverheat, "overheat"},
		{ErrOverCurrent, "overcurrent"}, {ErrRange, "range"}, {ErrOverload, "overload"}} {
		if e.Bits&f.bit != 0 {
			names = append(names, f.name)
		}
	}
	return fmt.Sprintf("feetech: servo %d reports %v (error byte %#02x)", e.ID, names, e.Bits)
}

// Bus is the controller side of a servo bus on a UART. It is used from its
// executor's goroutine; every done function runs there too.
type Bus struct {
	port  uart.Port
	ex    *executor.Executor
	o     Options
	stop  func()
	queue []*txn
	cur   *txn
	timer *executor.Timer // times cur out; one timer, re-armed per transaction
	ps    Parser
	echo  []byte // scratch for the echo check
	// spare holds sync-write transactions already sent, for the next
	// SyncWrite to reuse with their buffers: a control loop writing its
	// goals every period then allocates nothing on the bus.
	spare []*txn
	// syncWritten is the done of every sync write, bound once.
	syncWritten func(t *txn, err error)
	// spareReads and presentRead do the same for ReadPresent.
	spareReads  []*txn
	presentRead func(t *txn, err error)
	// closed is set by Close.
	closed bool
}

// txn is one transaction: a request and the status packets it expects.
type txn struct {
	req    []byte
	expect []uint8 // ids whose status packets complete it, in order
	got    []Packet
	at     time.Time
	done   func(t *txn, err error)
	echo   bool // the request's echo has been skipped
	badSum int  // parser checksum failures seen when the txn began

	// Room for a one-servo transaction's request, expected id, answer
	// and its parameters inside the txn itself: a 1 kHz poll of twelve
	// servos then costs one allocation per transaction, not five. Only
	// sync writes and ReadPresent, which hand their caller no slice into
	// it, reuse a txn, so slices into any other stay valid for the caller.
	reqBuf    [16]byte
	expectOne [1]uint8
	gotOne    [1]Packet
	paramBuf  [16]byte

	// A sync write's parameters, its encoded request and its caller's
	// done; the txn goes back to the bus's spares once it is sent.
	params      []byte
	syncDone    func(error)
	presentDone func(Present, error) // a ReadPresent's caller
}

// oneServo returns a transaction that sends p and expects one status
// packet, from servo id.
func oneServo(id uint8, p Packet, done func(t *txn, err error)) *txn {
	t := &txn{done: done}
	t.req = p.AppendTo(t.reqBuf[:0])
	t.expectOne[0] = id
	t.expect = t.expectOne[:]
	t.got = t.gotOne[:0]
	return t
}

// New returns a Bus on port, configured to the servos' line settings (8N1 at
// o.Baud). It reads the port from now on; Close stops it.
func New(port uart.Port, ex *executor.Executor, o *Options) (*Bus, error) {
	b := &Bus{port: port, ex: ex}
	b.syncWritten = b.recycleSyncWrite
	b.presentRead = b.readPresentDone
	if o != nil {
		b.o = *o
	}
	if b.o.Baud == 0 {
		b.o.Baud = DefaultBaud
	}
	if b.o.Timeout <= 0 {
		b.o.Timeout = DefaultTimeout
	}
	if b.o.Model != STS && b.o.Model != SCS {
		return nil, fmt.Errorf("feetech: model %d is neither STS nor SCS", b.o.Model)
	}
	if err := port.Configure(uart.Config{Baud: b.o.Baud}); err != nil {
		return nil, fmt.Errorf("feetech: configure port: %w", err)
	}
	b.stop = port.Receive(func(p []byte, at time.Time) {
		ex.Post(func() { b.receive(p, at) })
	})
	return b, nil
}

// Model returns the servo family the bus was opened for.
func (b *Bus) Model() Model { return b.o.Model }

// Close stops reading the port and fails the queued transactions with
// ErrClosed.
func (b *Bus) Close() {
	if b.closed {
		return
	}
	b.closed = true
	b.stop()
	if b.timer != nil {
		b.timer.Stop()
	}
	pending := b.queue
	if b.cur != nil {
		pending = append([]*txn{b.cur}, pending...)
	}
	b.cur, b.queue = nil, nil
	for _, t := range pending {
		t.done(t, ErrClosed)
	}
}

// Stats returns how many bytes the parser dropped as garbage and how many
// candidate packets failed their checksum.
func (b *Bus) Stats() (dropped, badChecksums int) { return b.ps.Dropped, b.ps.BadChecksums }

// submit queues a transaction and starts it if the line is free.
func (b *Bus) submit(t *txn) {
	if b.closed {
		t.done(t, ErrClosed)
		return
	}
	b.queue = append(b.queue, t)
	if b.cur == nil {
		b.next()
	}
}

// next puts the oldest queued transaction on the line.
func (b *Bus) next() {
	for b.cur == nil && len(b.queue) > 0 {
		// Shifted down, not resliced: the queue's array is reused and
		// a busy bus does not grow a new one every few transactions.
		t := b.queue[0]
		copy(b.queue, b.queue[1:])
		b.queue[len(b.queue)-1] = nil
		b.queue = b.queue[:len(b.queue)-1]
		t.badSum = b.ps.BadChecksums
		if len(t.expect) > 0 {
			b.cur = t
			if b.timer == nil {
				b.timer = b.ex.After(b.o.Timeout, b.timeoutCur)
			} else {
				b.timer.Reset(b.o.Timeout)
			}
		}
		if _, err := b.port.Write(t.req); err != nil {
			if b.cur == t {
				b.cur = nil
				b.timer.Stop()
			}
			t.done(t, fmt.Errorf("feetech: write: %w", err))
			continue
		}
		if len(t.expect) == 0 {
			// Broadcasts are not answered: done once written.
			t.done(t, nil)
		}
	}
}

// finish completes t, if it is the one on the line, and starts the next.
func (b *Bus) finish(t *txn, err error) {
	if b.cur != t {
		return
	}
	b.cur = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	t.done(t, err)
	b.next()
}

// timeoutCur is the timer's callback: Stop and Reset cancel a run meant
// for a transaction that has finished, so the one on the line is the one
// that timed out.
func (b *Bus) timeoutCur() {
	if b.cur != nil {
		b.timeout(b.cur)
	}
}

func (b *Bus) timeout(t *txn) {
	if b.cur != t {
		return
	}
	// Whatever partial packet the parser holds is stale now: a corrupt
	// length byte must not swallow the next answer.
	b.ps.Reset()
	missing := t.expect[len(t.got)]
	err := fmt.Errorf("feetech: servo %d: %w after %v", missing, ErrTimeout, b.o.Timeout)
	if b.ps.BadChecksums > t.badSum {
		err = fmt.Errorf("feetech: servo %d: %w (no valid answer in %v)", missing, ErrChecksum, b.o.Timeout)
	}
	b.finish(t, err)
}

// receive parses bytes from the line; it runs on the executor.
func (b *Bus) receive(p []byte, at time.Time) {
	if b.closed {
		return
	}
	b.ps.Feed(p, func(pk Packet) {
		t := b.cur
		if t == nil {
			return // nobody asked: a late answer or noise
		}
		if !t.echo && len(t.got) == 0 && bytes.Equal(b.encodeEcho(pk), t.req) {
			t.echo = true
			return
		}
		if pk.ID != t.expect[len(t.got)] {
			return
		}
		if len(t.got) == 0 && len(pk.Params) <= len(t.paramBuf) {
			pk.Params = append(t.paramBuf[:0], pk.Params...)
		} else {
			pk.Params = append([]byte(nil), pk.Params...)
		}
		t.got = append(t.got, pk)
		t.at = at
		if len(t.got) == len(t.expect) {
			b.finish(t, nil)
		}
	})
}

// encodeEcho encodes pk into a scratch buffer, valid until the next call,
// to compare it with the request without allocating per packet.
func (b *Bus) encodeEcho(pk Packet) []byte {
	b.echo = pk.AppendTo(b.echo[:0])
	return b.echo
}

// status returns the error of a status packet: nil or a *StatusError.
func status(pk Packet) error {
	if pk.Instr == 0 {
		return nil
	}
	return &StatusError{ID: pk.ID, Bits: pk.Instr}
}

func checkID(id uint8) error {
	if id > 0xFD && id != Broadcast {
		return fmt.Errorf("feetech: id %d is not a servo id (0–253) or Broadcast", id)
	}
	return nil
}

// Ping asks servo id to answer. done gets nil when it does.
func (b *Bus) Ping(id uint8, done func(error)) {
	if err := checkID(id); err != nil || id == Broadcast {
		if err == nil {
			err = fmt.Errorf("feetech: ping needs one servo id, not Broadcast")
		}
		done(err)
		return
	}
	b.submit(oneServo(id, Packet{ID: id, Instr: InstrPing}, func(t *txn, err error) {
		if err == nil {
			err = status(t.got[0])
		}
		done(err)
	}))
}

// ReadRegister reads n bytes from address addr of servo id. done gets the
// bytes and the time they arrived.
func (b *Bus) ReadRegister(id, addr, n uint8, done func(data []byte, at time.Time, err error)) {
	if err := checkID(id); err != nil || id == Broadcast || n == 0 || int(n) > MaxParams-1 {
		if err == nil {
			err = fmt.Errorf("feetech: read of %d bytes from servo %d: want one servo and 1–%d bytes", n, id, MaxParams-1)
		}
		done(nil, time.Time{}, err)
		return
	}
	b.submit(oneServo(id, Packet{ID: id, Instr: InstrRead, Params: []byte{addr, n}}, func(t *txn, err error) {
		if err != nil {
			done(nil, time.Time{}, err)
			return
		}
		pk := t.got[0]
		if len(pk.Params) != int(n) {
			done(nil, t.at, fmt.Errorf("feetech: servo %d answered %d bytes, want %d", id, len(pk.Params), n))
			return
		}
		done(pk.Params, t.at, status(pk))
	}))
}

// WriteRegister writes data at address addr of servo id and waits for its
// status packet. To Broadcast it completes once sent.
func (b *Bus) WriteRegister(id, addr uint8, data []byte, done func(error)) {
	b.write(InstrWrite, id, addr, data, done)
}

// RegWrite arms a write at servo id that Action applies.
func (b *Bus) RegWrite(id, addr uint8, data []byte, done func(error)) {
	b.write(InstrRegWrite, id, addr, data, done)
}

func (b *Bus) write(instr, id, addr uint8, data []byte, done func(error)) {
	if err := checkID(id); err != nil {
		done(err)
		return
	}
	if len(data) == 0 || len(data) > MaxParams-1 {
		done(fmt.Errorf("feetech: write of %d bytes to servo %d: want 1–%d", len(data), id, MaxParams-1))
		return
	}
	b.submit(b.ackTxn(id, Packet{ID: id, Instr: instr, Params: append([]byte{addr}, data...)}, done))
}

// Action applies the writes armed with RegWrite at servo id (Broadcast: at
// every servo at once).
func (b *Bus) Action(id uint8, done func(error)) {
	if err := checkID(id); err != nil {
		done(err)
		return
	}
	b.submit(b.ackTxn(id, Packet{ID: id, Instr: InstrAction}, done))
}

// ackTxn is a transaction answered by a bare status packet, or by nothing
// for a broadcast.
func (b *Bus) ackTxn(id uint8, p Packet, done func(error)) *txn {
	t := oneServo(id, p, func(t *txn, err error) {
		if err == nil && len(t.got) > 0 {
			err = status(t.got[0])
		}
		done(err)
	})
	if id == Broadcast {
		t.expect = nil
	}
	return t
}

// SyncData is one servo's share of a SYNC_WRITE.
type SyncData struct {
	ID   uint8
	Data []byte
}

// SyncWrite writes each servo's data at addr in one broadcast packet. Every
// entry must carry the same number of bytes. No servo answers; done runs
// once the packet is sent.
func (b *Bus) SyncWrite(addr uint8, items []SyncData, done func(error)) {
	if len(items) == 0 {
		done(fmt.Errorf("feetech: sync write with no servos"))
		return
	}
	n := len(items[0].Data)
	for _, it := range items {
		if err := checkID(it.ID); err != nil || it.ID == Broadcast {
			done(fmt.Errorf("feetech: sync write: id %d is not a servo id", it.ID))
			return
		}
		if len(it.Data) != n || n == 0 {
			done(fmt.Errorf("feetech: sync write: servo %d has %d bytes, want %d (and at least 1)", it.ID, len(it.Data), n))
			return
		}
	}
	if size := 2 + len(items)*(1+n); size > MaxParams {
		done(fmt.Errorf("feetech: sync write of %d bytes exceeds one packet (%d)", size, MaxParams))
		return
	}
	t := takeSpare(&b.spare)
	params := append(t.params[:0], addr, uint8(n))
	for _, it := range items {
		params = append(params, it.ID)
		params = append(params, it.Data...)
	}
	t.params = params
	t.req = Packet{ID: Broadcast, Instr: InstrSyncWrite, Params: params}.AppendTo(t.req[:0])
	t.syncDone, t.done, t.echo = done, b.syncWritten, false
	b.submit(t)
}

// recycleSyncWrite completes a sync write and keeps its transaction for
// the next one: nothing outside the bus holds a sync write's buffers
// (ports do not keep what they are given to write).
func (b *Bus) recycleSyncWrite(t *txn, err error) {
	done := t.syncDone
	t.syncDone, t.done = nil, nil
	b.spare = append(b.spare, t)
	done(err)
}

// SyncRead reads n bytes at addr from each of ids in one request (STS
// servos only); they answer one after the other, in the order asked. done
// gets the data in the same order.
func (b *Bus) SyncRead(ids []uint8, addr, n uint8, done func(data [][]byte, at time.Time, err error)) {
	if b.o.Model != STS {
		done(nil, time.Time{}, fmt.Errorf("feetech: sync read needs STS servos, the bus has %v", b.o.Model))
		return
	}
	if len(ids) == 0 || n == 0 || len(ids)+2 > MaxParams {
		done(nil, time.Time{}, fmt.Errorf("feetech: sync read of %d bytes from %d servos", n, len(ids)))
		return
	}
	for _, id := range ids {
		if err := checkID(id); err != nil || id == Broadcast {
			done(nil, time.Time{}, fmt.Errorf("feetech: sync read: id %d is not a servo id", id))
			return
		}
	}
	params := append([]byte{addr, n}, ids...)
	b.submit(&txn{
		req:    Packet{ID: Broadcast, Instr: InstrSyncRead, Params: params}.Encode(),
		expect: append([]uint8(nil), ids...),
		done: func(t *txn, err error) {
			if err != nil {
				done(nil, time.Time{}, err)
				return
			}
			out := make([][]byte, len(t.got))
			var firstErr error
			for i, pk := range t.got {
				if len(pk.Params) != int(n) {
					done(nil, t.at, fmt.Errorf("feetech: servo %d answered %d bytes, want %d", pk.ID, len(pk.Params), n))
					return
				}
				out[i] = pk.Params
				if e := status(pk); e != nil && firstErr == nil {
					firstErr = e
				}
			}
			done(out, t.at, firstErr)
		},
	})
}

// SetTorque turns servo id's holding torque on or off.
func (b *Bus) SetTorque(id uint8, on bool, done func(error)) {
	v := byte(0)
	if on {
		v = 1
	}
	b.WriteRegister(id, RegTorqueEnable, []byte{v}, done)
}

// Goal is where a servo should go: Position in steps (0–4095 STS, 0–1023
// SCS) at Speed steps/s (0 means the servo's maximum).
type Goal struct {
	ID       uint8
	Position int
	Speed    int
}

// goalBytes is the six bytes from RegGoalPosition: position, time (0: use
// the speed) and speed.
func (b *Bus) goalBytes(g Goal) ([]byte, error) {
	m := b.o.Model
	if g.Position < 0 || g.Position > m.MaxPosition() {
		return nil, fmt.Errorf("feetech: servo %d goal position %d outside 0–%d", g.ID, g.Position, m.MaxPosition())
	}
	if g.Speed < 0 || g.Speed > math.MaxInt16 {
		return nil, fmt.Errorf("feetech: servo %d goal speed %d outside 0–%d", g.ID, g.Speed, math.MaxInt16)
	}
	out := make([]byte, 6)
	m.Put16(out[0:], uint16(g.Position))
	m.Put16(out[4:], uint16(g.Speed))
	return out, nil
}

// SetGoal sends servo g.ID to g.Position at g.Speed (one WRITE at
// RegGoalPosition of position, goal time 0 and speed).
func (b *Bus) SetGoal(g Goal, done func(error)) {
	data, err := b.goalBytes(g)
	if err != nil {
		done(err)
		return
	}
	b.WriteRegister(g.ID, RegGoalPosition, data, done)
}

// SyncGoals sends every goal in one SYNC_WRITE.
func (b *Bus) SyncGoals(goals []Goal, done func(error)) {
	items := make([]SyncData, len(goals))
	for i, g := range goals {
		data, err := b.goalBytes(g)
		if err != nil {
			done(err)
			return
		}
		items[i] = SyncData{ID: g.ID, Data: data}
	}
	b.SyncWrite(RegGoalPosition, items, done)
}

// Present is what a servo reports about itself.
type Present struct {
	Position    int     // steps
	Speed       int     // steps/s, negative turning down
	Load        int     // 0.1 % of maximum torque, signed: −1000…1000
	Voltage     float64 // V
	Temperature int     // °C
	Moving      bool
	At          time.Time // when the answer arrived
}

// presentLen is the span read by ReadPresent: RegPresentPosition through
// RegMoving.
const presentLen = RegMoving - RegPresentPosition + 1

// DecodePresent reads a Present from the bytes of RegPresentPosition …
// RegMoving (11 bytes).
func (m Model) DecodePresent(b []byte) (Present, error) {
	if len(b) < presentLen {
		return Present{}, fmt.Errorf("feetech: present block has %d bytes, want %d", len(b), presentLen)
	}
	pos := int(m.Get16(b[0:]))
	if m == STS {
		pos = DecodeSigned(uint16(pos), 15)
	}
	return Present{
		Position:    pos,
		Speed:       DecodeSigned(m.Get16(b[2:]), 15),
		Load:        DecodeSigned(m.Get16(b[4:]), 10),
		Voltage:     float64(b[6]) / 10,
		Temperature: int(b[7]),
		Moving:      b[RegMoving-RegPresentPosition] != 0,
	}, nil
}

// EncodePresent is the inverse of DecodePresent (At is not encoded): what
// a servo holds at RegPresentPosition … RegMoving. Bytes 64 and 65 (the
// asynchronous-write flag and the status) are left zero.
func (m Model) EncodePresent(p Present) []byte {
	b := make([]byte, presentLen)
	m.PutPresent(b, p)
	return b
}

// PutPresent is EncodePresent into the start of b, without allocating: a
// simulated servo reports its state into its control table every step.
// It panics if b is shorter than the present block (RegPresentPosition
// through RegMoving).
func (m Model) PutPresent(b []byte, p Present) {
	b = b[:presentLen]
	clear(b)
	pos := uint16(max(0, min(p.Position, 0xFFFF)))
	if m == STS {
		pos = EncodeSigned(p.Position, 15)
	}
	m.Put16(b[0:], pos)
	m.Put16(b[2:], EncodeSigned(p.Speed, 15))
	m.Put16(b[4:], EncodeSigned(p.Load, 10))
	b[6] = byte(max(0, min(math.Round(p.Voltage*10), 255)))
	b[7] = byte(max(0, min(p.Temperature, 255)))
	if p.Moving {
		b[RegMoving-RegPresentPosition] = 1
	}
}

// ReadPresent reads position, speed, load, voltage, temperature and the
// moving flag of servo id in one READ.
func (b *Bus) ReadPresent(id uint8, done func(Present, error)) {
	if err := checkID(id); err != nil || id == Broadcast {
		b.ReadRegister(id, RegPresentPosition, presentLen, func(_ []byte, _ time.Time, err error) { done(Present{}, err) })
		return
	}
	// A poll's transaction hands its caller a Present, no slice into
	// it: it is reused, and a loop polling its servos every period
	// allocates nothing for it.
	t := takeSpare(&b.spareReads)
	params := [2]byte{RegPresentPosition, presentLen}
	t.req = Packet{ID: id, Instr: InstrRead, Params: params[:]}.AppendTo(t.reqBuf[:0])
	t.expectOne[0] = id
	t.expect = t.expectOne[:]
	t.got = t.gotOne[:0]
	t.done, t.presentDone = b.presentRead, done
	b.submit(t)
}

// readPresentDone completes a ReadPresent and keeps its transaction for the
// next one.
func (b *Bus) readPresentDone(t *txn, err error) {
	done, id := t.presentDone, t.expectOne[0]
	var p Present
	if err == nil {
		pk := t.got[0]
		if len(pk.Params) != presentLen {
			err = fmt.Errorf("feetech: servo %d answered %d bytes, want %d", id, len(pk.Params), presentLen)
		} else {
			var derr error
			p, derr = b.o.Model.DecodePresent(pk.Params)
			p.At = t.at
			if err = status(pk); derr != nil {
				err = derr
			}
		}
	}
	*t = txn{}
	b.spareReads = append(b.spareReads, t)
	done(p, err)
}

// takeSpare takes a transaction from a list of sent ones for reuse, or
// makes one when the list is empty.
func takeSpare(spare *[]*txn) *txn {
	k := len(*spare)
	if k == 0 {
		return &txn{}
	}
	t := (*spare)[k-1]
	(*spare)[k-1] = nil
	*spare = (*spare)[:k-1]
	return t
}
