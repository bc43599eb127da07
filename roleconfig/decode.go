package roleconfig

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode decodes the part of the configuration at path into out, a pointer
// to a struct (or any type yaml decodes into) holding the defaults: fields
// the file leaves out keep them. path is "" for the role's own parameters
// (everything outside the sections every role shares), "limits" for the
// limits, or a dotted path below either ("power", "speed_control"). A
// missing section leaves out as it is.
//
// Every role decodes its settings this way, so their errors read the same:
// a key out has no field for, or a value of the wrong kind, is a
// *FieldError naming the file, the line and the dotted field,
// "tracks.yaml:99: speed_control.kpp: unknown field (known: ..., kd, ki,
// kp, ...)".
//
// The values come from Params and Limits, not from the file's text, so
// that a configuration edited in code decodes what it now holds; the file
// only gives the lines.
func (c *Config) Decode(path string, out any) error {
	v, ok := c.lookup(path)
	if !ok || v == nil {
		return nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return c.Errorf(path, "%v", err)
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("roleconfig: Decode(%q) wants a non-nil pointer, got %T", path, out)
	}
	if err := c.check(&n, rv.Type().Elem(), path); err != nil {
		return err
	}
	if err := n.Decode(out); err != nil {
		return c.Errorf(path, "%s", yamlMessage(err))
	}
	return nil
}

// lookup finds the value at a dotted path of the role's parameters.
func (c *Config) lookup(path string) (any, bool) {
	var cur any = c.Params
	parts := []string(nil)
	if path != "" {
		parts = splitField(path)
	}
	if len(parts) > 0 && parts[0] == "limits" {
		cur, parts = c.Limits, parts[1:]
	}
	for _, p := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// check walks n against the type it will be decoded into and reports the
// first key that type has no field for, or scalar that does not fit its
// field, as a *FieldError at field path.
func (c *Config) check(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(yaml.Node{}) || t.Kind() == reflect.Interface {
		return nil
	}
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			break
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			ft, ok := fields[key]
			if !ok {
				return c.Errorf(join(key), "unknown field (known: %s)", strings.Join(sortedNames(fields), ", "))
			}
			if err := c.check(n.Content[i+1], ft, join(key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			break
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := c.check(n.Content[i+1], t.Elem(), join(n.Content[i].Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			break
		}
		if t.Kind() == reflect.Array && len(n.Content) != t.Len() {
			return c.Errorf(path, "%d values, want %d", len(n.Content), t.Len())
		}
		for i, e := range n.Content {
			if err := c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	// A scalar, or a node of the wrong kind: let yaml say whether it fits.
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return c.Errorf(path, "%s", yamlMessage(err))
	}
	return nil
}

// yamlFields maps the keys a struct type decodes, inline structs included,
// to their field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					fields[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields
}

func sortedNames(m map[string]reflect.Type) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// yamlMessage is a yaml error without its "yaml: unmarshal errors:" and
// line prefixes, which speak of the re-encoded value, not of the file.
func yamlMessage(err error) string {
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		s := te.Errors[0]
		if i := strings.Index(s, ": "); strings.HasPrefix(s, "line ") && i > 0 {
			s = s[i+2:]
		}
		return s
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
