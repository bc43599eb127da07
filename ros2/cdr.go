package ros2

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/saint-os/saint/internal/fielderr"
)

// The encapsulation header of XCDR1 little-endian data (CDR_LE), the
// first four bytes of every serialized sample.
var encapsulationLE = [4]byte{0x00, 0x01, 0x00, 0x00}

// RequestHeader is rmw_cyclonedds_cpp's service request header: which
// client asked (a 64-bit id derived from its request writer's GUID) and
// the client's sequence number of the call.
type RequestHeader struct {
	GUID uint64
	Seq  int64
}

// FieldError says which field of a sample is wrong ("linear.x", "" for
// the sample as a whole) and why: the project's field error. Encode and
// Decode wrap it in a *SampleError naming the message type.
type FieldError = fielderr.Error

// SampleError places an error in a sample of a message type, as
// os.PathError places one at a path.
type SampleError struct {
	Type string // "geometry_msgs/Twist"
	Err  error
}

func (e *SampleError) Error() string {
	var fe *FieldError
	if errors.As(e.Err, &fe) && fe.Field != "" {
		return fmt.Sprintf("ros2: %s field %s: %s", e.Type, fe.Field, fe.Message)
	}
	return fmt.Sprintf("ros2: %s: %s", e.Type, e.Err)
}

// Unwrap returns the *FieldError.
func (e *SampleError) Unwrap() error { return e.Err }

// sampleErr is a *FieldError for field of a sample of typ.
func sampleErr(typ, field, format string, args ...any) error {
	return &SampleError{Type: typ, Err: &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}}
}

// Encode serializes v, a bus payload decoded from JSON (objects as
// map[string]any, numbers as json.Number or float64), as m in XCDR1
// little-endian with its encapsulation header: what a DDS writer of m's
// type puts on the wire. Fields v lacks are zero; fields m lacks are
// ignored. For a service's halves, hdr is the request header (nil for
// zero). A uint8[] may be given as base64 text (how JSON carries []byte)
// or as a []byte (copied as it is, for a caller that has the bytes: a
// camera frame's pixels), a NamedValue[] as an object of numbers.
func (r *Registry) Encode(m *Message, v any, hdr *RequestHeader) ([]byte, error) {
	e := &encoder{reg: r, top: m.FullName(), buf: make([]byte, 4, 256)}
	copy(e.buf, encapsulationLE[:])
	obj, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, sampleErr(e.top, "", "want an object, got %s", kindOf(v))
	}
	if m.Kind == "srv" {
		var h RequestHeader
		if hdr != nil {
			h = *hdr
		}
		e.align(8)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, h.GUID)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(h.Seq))
	}
	if err := e.message(m, obj, ""); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	reg *Registry
	top string
	buf []byte
}

// align pads to n bytes from the start of the payload (after the
// encapsulation header), as XCDR1 wants.
func (e *encoder) align(n int) {
	for (len(e.buf)-4)%n != 0 {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) fail(path, format string, args ...any) error {
	return sampleErr(e.top, path, format, args...)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (e *encoder) message(m *Message, obj map[string]any, path string) error {
	if len(m.Fields) == 0 {
		e.buf = append(e.buf, 0) // EmptyStructField
		return nil
	}
	for _, f := range m.Fields {
		if err := e.field(f.Type, obj[f.Name], join(path, f.Name)); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) field(t Type, v any, path string) error {
	elem := Type{Name: t.Name}
	switch {
	case t.Sequence:
		if s, ok := v.(string); ok && (t.Name == "uint8" || t.Name == "byte") {
			data, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return e.fail(path, "want base64 bytes: %v", err)
			}
			e.align(4)
			e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(data)))
			e.buf = append(e.buf, data...)
			return nil
		}
		if data, ok := v.([]byte); ok && (t.Name == "uint8" || t.Name == "byte") {
			e.align(4)
			e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(data)))
			e.buf = append(e.buf, data...)
			return nil
		}
		if o, ok := v.(map[string]any); ok && t.Name == Package+"/NamedValue" {
			v = namedValues(o)
		}
		items, ok := v.([]any)
		if !ok && v != nil {
			return e.fail(path, "want an array, got %s", kindOf(v))
		}
		e.align(4)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(items)))
		for i, it := range items {
			if err := e.field(elem, it, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	case t.Size > 0:
		items, ok := v.([]any)
		if !ok && v != nil {
			return e.fail(path, "want an array of %d, got %s", t.Size, kindOf(v))
		}
		if v != nil && len(items) != t.Size {
			return e.fail(path, "want %d elements, got %d", t.Size, len(items))
		}
		for i := 0; i < t.Size; i++ {
			var it any
			if items != nil {
				it = items[i]
			}
			if err := e.field(elem, it, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	}
	if !t.Primitive() {
		sub, _ := e.reg.Message(t.Name)
		obj, ok := v.(map[string]any)
		if !ok && v != nil {
			return e.fail(path, "want an object (%s), got %s", t.Name, kindOf(v))
		}
		return e.message(sub, obj, path)
	}
	return e.primitive(t.Name, v, path)
}

// namedValues turns {"linear": 0.5, "angular": 0} into NamedValue
// objects sorted by name.
func namedValues(o map[string]any) []any {
	names := make([]string, 0, len(o))
	for k := range o {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, k := range names {
		out[i] = map[string]any{"name": k, "value": o[k]}
	}
	return out
}

func (e *encoder) primitive(name string, v any, path string) error {
	switch name {
	case "string":
		s, ok := v.(string)
		if !ok && v != nil {
			return e.fail(path, "want a string, got %s", kindOf(v))
		}
		e.align(4)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(s)+1))
		e.buf = append(e.buf, s...)
		e.buf = append(e.buf, 0)
		return nil
	case "bool":
		b, ok := v.(bool)
		if !ok && v != nil {
			return e.fail(path, "want true or false, got %s", kindOf(v))
		}
		if b {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
		return nil
	case "float32", "float64":
		f, err := number(v)
		if err != nil {
			return e.fail(path, "%v", err)
		}
		if name == "float32" {
			if math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
				return e.fail(path, "%g does not fit a float32", f)
			}
			e.align(4)
			e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(float32(f)))
		} else {
			e.align(8)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
		}
		return nil
	}
	size, signed := intSize(name)
	u, err := integer(v, size, signed)
	if err != nil {
		return e.fail(path, "%v for %s", err, name)
	}
	e.align(size)
	switch size {
	case 1:
		e.buf = append(e.buf, byte(u))
	case 2:
		e.buf = binary.LittleEndian.AppendUint16(e.buf, uint16(u))
	case 4:
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(u))
	default:
		e.buf = binary.LittleEndian.AppendUint64(e.buf, u)
	}
	return nil
}

// integer checks that v is an integer that fits size bytes and returns
// its two's complement bits.
func integer(v any, size int, signed bool) (uint64, error) {
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && signed {
			if lo, hi := -int64(1)<<(size*8-1), int64(1)<<(size*8-1)-1; i < lo || i > hi {
				return 0, fmt.Errorf("%d is out of range", i)
			}
			return uint64(i), nil
		}
		if x, err := strconv.ParseUint(string(n), 10, 64); err == nil && !signed {
			if size < 8 && x>>(size*8) != 0 {
				return 0, fmt.Errorf("%d is out of range", x)
			}
			return x, nil
		}
	}
	f, err := number(v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("want an integer, got %g", f)
	}
	lo, hi := 0.0, math.Ldexp(1, size*8)
	if signed {
		lo, hi = -math.Ldexp(1, size*8-1), math.Ldexp(1, size*8-1)
	}
	if f < lo || f >= hi {
		return 0, fmt.Errorf("%g is out of range", f)
	}
	if signed {
		return uint64(int64(f)), nil
	}
	return uint64(f), nil
}

func intSize(name string) (size int, signed bool) {
	switch name {
	case "int8":
		return 1, true
	case "uint8", "byte", "char":
		return 1, false
	case "int16":
		return 2, true
	case "uint16":
		return 2, false
	case "int32":
		return 4, true
	case "uint32":
		return 4, false
	case "int64":
		return 8, true
	}
	return 8, false
}

func number(v any) (float64, error) {
	switch n := v.(type) {
	case nil:
		return 0, nil
	case float64:
		return n, nil
	case float32:
		return float64(n), nil
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case uint64:
		return float64(n), nil
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("want a number, got %s", n)
		}
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %s", kindOf(v))
}

func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, uint64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", x)
	}
}

// Decode parses data, a serialized sample of m (with its encapsulation
// header, either byte order), into a value that encodes to the bus's JSON:
// objects as map[string]any, uint8[] as []byte (base64 in JSON), a
// NamedValue[] as an object of numbers. It returns the request header
// for a service's halves. A float that is NaN or infinite is an error
// naming the field: JSON, and so the bus, cannot carry it.
func (r *Registry) Decode(m *Message, data []byte) (map[string]any, RequestHeader, error) {
	var hdr RequestHeader
	d := &decoder{reg: r, top: m.FullName()}
	if len(data) < 4 {
		return nil, hdr, d.fail("", "%d bytes is no sample", len(data))
	}
	switch data[1] {
	case 0x01:
		d.order = binary.LittleEndian
	case 0x00:
		d.order = binary.BigEndian
	default:
		return nil, hdr, d.fail("", "encapsulation %#02x%02x is not XCDR1", data[0], data[1])
	}
	if data[0] != 0 {
		return nil, hdr, d.fail("", "encapsulation %#02x%02x is not XCDR1", data[0], data[1])
	}
	d.buf = data[4:]
	if m.Kind == "srv" {
		g, err := d.fixed(8, "cdds_request_header_guid")
		if err != nil {
			return nil, hdr, err
		}
		s, err := d.fixed(8, "cdds_request_header_seq")
		if err != nil {
			return nil, hdr, err
		}
		hdr = RequestHeader{GUID: d.order.Uint64(g), Seq: int64(d.order.Uint64(s))}
	}
	v, err := d.message(m, "")
	return v, hdr, err
}

type decoder struct {
	reg   *Registry
	top   string
	order binary.ByteOrder
	buf   []byte
	off   int
}

func (d *decoder) fail(path, format string, args ...any) error {
	return sampleErr(d.top, path, format, args...)
}

// fixed aligns to n and takes n bytes.
func (d *decoder) fixed(n int, path string) ([]byte, error) {
	for d.off%n != 0 {
		d.off++
	}
	if d.off+n > len(d.buf) {
		return nil, d.fail(path, "sample ends early (%d bytes)", len(d.buf))
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b, nil
}

func (d *decoder) count(path string) (int, error) {
	b, err := d.fixed(4, path)
	if err != nil {
		return 0, err
	}
	n := d.order.Uint32(b)
	if int64(n) > int64(len(d.buf)-d.off) {
		return 0, d.fail(path, "length %d is longer than the sample", n)
	}
	return int(n), nil
}

func (d *decoder) message(m *Message, path string) (map[string]any, error) {
	out := make(map[string]any, len(m.Fields))
	if len(m.Fields) == 0 {
		_, err := d.fixed(1, join(path, EmptyStructField))
		return out, err
	}
	for _, f := range m.Fields {
		v, err := d.field(f.Type, join(path, f.Name))
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}

func (d *decoder) field(t Type, path string) (any, error) {
	elem := Type{Name: t.Name}
	switch {
	case t.Sequence:
		n, err := d.count(path)
		if err != nil {
			return nil, err
		}
		if t.Name == "uint8" || t.Name == "byte" {
			b := make([]byte, n)
			copy(b, d.buf[d.off:d.off+n])
			d.off += n
			return b, nil
		}
		items := make([]any, n)
		for i := range items {
			if items[i], err = d.field(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		if t.Name == Package+"/NamedValue" {
			o := make(map[string]any, n)
			for _, it := range items {
				nv := it.(map[string]any)
				o[nv["name"].(string)] = nv["value"]
			}
			return o, nil
		}
		return items, nil
	case t.Size > 0:
		items := make([]any, t.Size)
		var err error
		for i := range items {
			if items[i], err = d.field(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return items, nil
	}
	if !t.Primitive() {
		sub, _ := d.reg.Message(t.Name)
		return d.message(sub, path)
	}
	switch t.Name {
	case "string":
		n, err := d.count(path)
		if err != nil {
			return nil, err
		}
		if n == 0 || d.buf[d.off+n-1] != 0 {
			return nil, d.fail(path, "string is not NUL-terminated")
		}
		s := string(d.buf[d.off : d.off+n-1])
		d.off += n
		return s, nil
	case "bool":
		b, err := d.fixed(1, path)
		if err != nil {
			return nil, err
		}
		if b[0] > 1 {
			return nil, d.fail(path, "boolean byte %d", b[0])
		}
		return b[0] == 1, nil
	case "float32":
		b, err := d.fixed(4, path)
		if err != nil {
			return nil, err
		}
		f := math.Float32frombits(d.order.Uint32(b))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, d.fail(path, "%v is not a finite number", f)
		}
		return f, nil
	case "float64":
		b, err := d.fixed(8, path)
		if err != nil {
			return nil, err
		}
		f := math.Float64frombits(d.order.Uint64(b))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, d.fail(path, "%v is not a finite number", f)
		}
		return f, nil
	}
	size, signed := intSize(t.Name)
	b, err := d.fixed(size, path)
	if err != nil {
		return nil, err
	}
	var u uint64
	switch size {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(d.order.Uint16(b))
	case 4:
		u = uint64(d.order.Uint32(b))
	default:
		u = d.order.Uint64(b)
	}
	if signed {
		shift := 64 - size*8
		return int64(u<<shift) >> shift, nil
	}
	return u, nil
}
