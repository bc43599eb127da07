package bus

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// InProcess is implemented by a Transport whose subscribers live in the
// publisher's process (bus/mem). Conn then publishes the value itself, and
// each subscription takes what it needs: a subscriber made by SubscribeJSON
// for the value's own type gets a deep copy of the value, any other the
// JSON encoding, made once per publication and only if someone needs it.
// On the wire (NATS) nothing changes: Conn encodes JSON as before.
type InProcess interface {
	// PublishValue delivers p to every subscription matching subject: to
	// one made by SubscribeValue through its value function, to any other
	// through its DeliverFunc with p's JSON. Before delivering anything it
	// calls p.Prepare, and returns its error, so that a value that cannot
	// be encoded reaches nobody, as with JSON on the wire. With no
	// subscription matching, nothing is encoded.
	PublishValue(subject string, p *Publication) error
	// SubscribeValue is Transport.Subscribe with a second function for
	// publications made with PublishValue. Bytes published by Publish or
	// Request still go to deliver.
	SubscribeValue(pattern string, deliver DeliverFunc, value func(subject string, p *Publication)) (Subscription, error)
}

// Publication is one value published in process. It is used on the
// publisher's goroutine while PublishValue runs, and not after.
type Publication struct {
	v       any
	plans   *plans
	data    []byte
	err     error
	encoded bool
}

// JSON returns the value's JSON encoding, made on the first call.
func (p *Publication) JSON() ([]byte, error) {
	if !p.encoded {
		p.data, p.err = json.Marshal(p.v)
		p.encoded = true
	}
	return p.data, p.err
}

// Prepare reports whether the value can be published: it returns the
// error JSON encoding would return. With bytes true (a subscriber wants
// JSON) it encodes; otherwise a value that can be copied is only checked
// (finite floats), without encoding.
func (p *Publication) Prepare(bytes bool) error {
	if bytes {
		_, err := p.JSON()
		return err
	}
	rv := reflect.ValueOf(p.v)
	if !rv.IsValid() {
		_, err := p.JSON()
		return err
	}
	if pl := p.plans.of(rv.Type()); !pl.copyable || pl.finite != nil && !pl.finite(rv) {
		_, err := p.JSON()
		return err
	}
	return nil
}

// copyAs returns a pointer to a deep copy of the value if it is of type t
// and copying gives what encoding it and decoding the JSON into a fresh t
// would: false otherwise (another type, a type JSON treats specially, a
// string that is not valid UTF-8, which JSON would alter).
func (p *Publication) copyAs(t reflect.Type) (any, bool) {
	rv := reflect.ValueOf(p.v)
	if !rv.IsValid() || rv.Type() != t {
		return nil, false
	}
	pl := p.plans.of(t)
	if !pl.copyable || pl.valid != nil && !pl.valid(rv) {
		return nil, false
	}
	dst := reflect.New(t)
	pl.copy(dst.Elem(), rv)
	return dst.Interface(), true
}

// plan is what the copier knows of a type, with its walks compiled once.
type plan struct {
	copyable bool // copy gives what a JSON round trip gives
	flat     bool // no slices or maps: assignment is a deep copy
	// copy deep-copies src into dst (settable, same type).
	copy func(dst, src reflect.Value)
	// finite reports whether every float is finite (JSON has no NaN);
	// nil for a type without floats.
	finite func(v reflect.Value) bool
	// valid reports whether every string is valid UTF-8, which JSON keeps
	// as it is; nil for a type without strings.
	valid func(v reflect.Value) bool
}

// plans caches plans by reflect.Type; a Conn keeps one. Safe for
// concurrent use.
type plans struct{ m sync.Map }

func (ps *plans) of(t reflect.Type) *plan {
	if p, ok := ps.m.Load(t); ok {
		return p.(*plan)
	}
	p := makePlan(t, map[reflect.Type]bool{})
	ps.m.Store(t, p)
	return p
}

// specialJSON reports whether JSON encodes or decodes t through a method
// of its own (time.Time, json.RawMessage ...).
func specialJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, i := range []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler](),
	} {
		if t.Implements(i) || pt.Implements(i) {
			return true
		}
	}
	return pt.Implements(reflect.TypeFor[json.Unmarshaler]()) || pt.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

func assign(dst, src reflect.Value) { dst.Set(src) }

func makePlan(t reflect.Type, seen map[reflect.Type]bool) *plan {
	no := &plan{}
	if seen[t] {
		return no // recursive types (through slices) are left to JSON
	}
	seen[t] = true
	defer delete(seen, t)
	if specialJSON(t) {
		return no
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &plan{copyable: true, flat: true, copy: assign}
	case reflect.Float32, reflect.Float64:
		return &plan{copyable: true, flat: true, copy: assign, finite: func(v reflect.Value) bool {
			f := v.Float()
			return !math.IsNaN(f) && !math.IsInf(f, 0)
		}}
	case reflect.String:
		return &plan{copyable: true, flat: true, copy: assign, valid: func(v reflect.Value) bool { return utf8.ValidString(v.String()) }}
	case reflect.Array, reflect.Slice:
		return listPlan(t, makePlan(t.Elem(), seen))
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().PkgPath() != "" {
			return no
		}
		return mapPlan(t, makePlan(t.Elem(), seen))
	case reflect.Struct:
		return structPlan(t, seen)
	}
	return no // pointers, interfaces, channels, functions, complex numbers
}

// listPlan is the plan of an array or slice of elements planned by e.
func listPlan(t reflect.Type, e *plan) *plan {
	if !e.copyable {
		return &plan{}
	}
	p := &plan{copyable: true, flat: t.Kind() == reflect.Array && e.flat}
	each := func(check func(reflect.Value) bool) func(reflect.Value) bool {
		if check == nil {
			return nil
		}
		return func(v reflect.Value) bool {
			for i := range v.Len() {
				if !check(v.Index(i)) {
					return false
				}
			}
			return true
		}
	}
	p.finite, p.valid = each(e.finite), each(e.valid)
	switch {
	case p.flat:
		p.copy = assign
	case t.Kind() == reflect.Array:
		p.copy = func(dst, src reflect.Value) {
			for i := range src.Len() {
				e.copy(dst.Index(i), src.Index(i))
			}
		}
	default:
		p.copy = func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := src.Len()
			s := reflect.MakeSlice(t, n, n)
			if e.flat {
				reflect.Copy(s, src)
			} else {
				for i := range n {
					e.copy(s.Index(i), src.Index(i))
				}
			}
			dst.Set(s)
		}
	}
	return p
}

// mapPlan is the plan of a map with string keys and elements planned by e.
func mapPlan(t reflect.Type, e *plan) *plan {
	if !e.copyable {
		return &plan{}
	}
	p := &plan{copyable: true}
	if e.finite != nil {
		p.finite = func(v reflect.Value) bool {
			for it := v.MapRange(); it.Next(); {
				if !e.finite(it.Value()) {
					return false
				}
			}
			return true
		}
	}
	p.valid = func(v reflect.Value) bool {
		for it := v.MapRange(); it.Next(); {
			if !utf8.ValidString(it.Key().String()) || e.valid != nil && !e.valid(it.Value()) {
				return false
			}
		}
		return true
	}
	p.copy = func(dst, src reflect.Value) {
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(t, src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(t.Elem()).Elem()
			e.copy(v, it.Value())
			m.SetMapIndex(it.Key(), v)
		}
		dst.Set(m)
	}
	return p
}

// structPlan is the plan of a struct: copyable when every field is, and
// JSON would carry every field under a name of its own.
func structPlan(t reflect.Type, seen map[reflect.Type]bool) *plan {
	type field struct {
		i int
		p *plan
	}
	var floats, strs, deep []field
	flat := true
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		// Unexported, embedded and "-" fields, and names two fields share,
		// are what JSON drops or resolves by its own rules.
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "-" {
			return &plan{}
		}
		if name == "" {
			name = f.Name
		}
		k := strings.ToLower(name)
		if names[k] {
			return &plan{}
		}
		names[k] = true
		fp := makePlan(f.Type, seen)
		if !fp.copyable {
			return &plan{}
		}
		flat = flat && fp.flat
		if fp.finite != nil {
			floats = append(floats, field{i, fp})
		}
		if fp.valid != nil {
			strs = append(strs, field{i, fp})
		}
		if !fp.flat {
			deep = append(deep, field{i, fp})
		}
	}
	p := &plan{copyable: true, flat: flat, copy: assign}
	if len(floats) > 0 {
		p.finite = func(v reflect.Value) bool {
			for _, f := range floats {
				if !f.p.finite(v.Field(f.i)) {
					return false
				}
			}
			return true
		}
	}
	if len(strs) > 0 {
		p.valid = func(v reflect.Value) bool {
			for _, f := range strs {
				if !f.p.valid(v.Field(f.i)) {
					return false
				}
			}
			return true
		}
	}
	if !flat {
		// Assign the whole struct, then replace the fields that share
		// memory (slices, maps) with copies of their own.
		p.copy = func(dst, src reflect.Value) {
			dst.Set(src)
			for _, f := range deep {
				f.p.copy(dst.Field(f.i), src.Field(f.i))
			}
		}
	}
	return p
}
