package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// strictDecoder decodes a message into a T only if it is one: for a
// struct, a JSON object naming none but T's fields and every field of T
// whose tag does not say omitempty. A command topic's subscriber takes
// nothing else, so that a message of another shape (a service's reply
// envelope {"result": …}, an object meant for another topic) is refused
// rather than read as T's zero value: a zero HeadCommand points the head
// at 0/0, a zero EStop releases the e-stop.
type strictDecoder struct {
	object   bool     // T is a struct: the message must be an object
	required []string // JSON names that must be present
}

func newStrictDecoder(t reflect.Type) *strictDecoder {
	d := &strictDecoder{}
	if t.Kind() == reflect.Struct {
		d.object = true
		d.required = requiredFields(t)
	}
	return d
}

// requiredFields are the JSON names of t's fields (embedded structs'
// included) whose tag does not say omitempty or omitzero.
func requiredFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, requiredFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if hasOption(opts, "omitempty") || hasOption(opts, "omitzero") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// decode unmarshals data into v, a pointer to a T, refusing what is not
// a T: a non-object for a struct, an unknown field at any depth, a
// required field missing, anything after the value.
func (d *strictDecoder) decode(data []byte, v any) error {
	if d.object {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
			return fmt.Errorf("not a JSON object")
		}
		var missing []string
		for _, name := range d.required {
			if _, ok := fields[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing field %s", strings.Join(missing, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the message")
	}
	return nil
}
