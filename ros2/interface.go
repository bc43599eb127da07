package ros2

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed saint_os/msg/*.msg saint_os/srv/*.srv std
var definitions embed.FS

// Package is the ROS 2 package of the project's own interfaces.
const Package = "saint_os"

// Primitive types of the ROS 2 interface definition language.
var primitives = map[string]bool{
	"bool": true, "byte": true, "char": true, "float32": true, "float64": true,
	"int8": true, "uint8": true, "int16": true, "uint16": true,
	"int32": true, "uint32": true, "int64": true, "uint64": true, "string": true,
}

// Type is one field's type: a primitive ("float32", "string") or a
// message ("geometry_msgs/Vector3"), alone, in a sequence (Sequence) or
// in an array of Size elements.
type Type struct {
	// Name is a primitive's name or a message's "pkg/Name".
	Name     string
	Sequence bool // T[]
	Size     int  // T[N]; 0 when not a fixed array
}

// Primitive reports whether the element type is a primitive.
func (t Type) Primitive() bool { return primitives[t.Name] }

// String writes the type as a .msg file does ("float64[36]").
func (t Type) String() string {
	switch {
	case t.Sequence:
		return t.Name + "[]"
	case t.Size > 0:
		return t.Name + "[" + strconv.Itoa(t.Size) + "]"
	}
	return t.Name
}

// Field is one field of a message.
type Field struct {
	Name string
	Type Type
}

// Message is one parsed .msg file, or one half of a .srv file.
type Message struct {
	Package string // "saint_os"
	Kind    string // "msg" or "srv"
	// Name is the message's name; a service's halves are "Name_Request"
	// and "Name_Response".
	Name   string
	Fields []Field
	// Text is the definition as its file writes it, comments and
	// constants included (for a service's halves, that half).
	Text string
}

// FullName is "pkg/Name", the form fields refer to it by.
func (m *Message) FullName() string { return m.Package + "/" + m.Name }

// DDSTypeName is the name DDS knows the type by, as ROS 2 registers it:
// "saint_os::msg::dds_::HeadState_".
func (m *Message) DDSTypeName() string {
	return m.Package + "::" + m.Kind + "::dds_::" + m.Name + "_"
}

// Service is one parsed .srv file.
type Service struct {
	Package, Name     string
	Request, Response *Message
}

// Registry holds every message and service definition, by "pkg/Name".
type Registry struct {
	messages map[string]*Message
	services map[string]*Service
}

// Message returns the message "pkg/Name" ("nav_msgs/Odometry",
// "saint_os/AdoptNode_Request").
func (r *Registry) Message(name string) (*Message, bool) {
	m, ok := r.messages[name]
	return m, ok
}

// Service returns the service "pkg/Name".
func (r *Registry) Service(name string) (*Service, bool) {
	s, ok := r.services[name]
	return s, ok
}

// Messages lists every message (services' halves included) sorted by
// package, kind and name.
func (r *Registry) Messages() []*Message {
	out := make([]*Message, 0, len(r.messages))
	for _, m := range r.messages {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

// Services lists every service sorted by package and name.
func (r *Registry) Services() []*Service {
	out := make([]*Service, 0, len(r.services))
	for _, s := range r.services {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Load parses the embedded definitions: saint_os and the standard
// messages. It fails if any file does not parse or a field names a
// message that is not defined.
func Load() (*Registry, error) { return LoadFS(definitions) }

// LoadFS parses every pkg/msg/*.msg and pkg/srv/*.srv under fsys (at any
// depth).
func LoadFS(fsys fs.FS) (*Registry, error) {
	r := &Registry{messages: map[string]*Message{}, services: map[string]*Service{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := path.Ext(p)
		if ext != ".msg" && ext != ".srv" {
			return nil
		}
		kind := path.Base(path.Dir(p))
		pkg := path.Base(path.Dir(path.Dir(p)))
		if kind != ext[1:] {
			return fmt.Errorf("ros2: %s: a %s file belongs in a %s/ folder", p, ext, ext[1:])
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(path.Base(p), ext)
		if ext == ".msg" {
			m, err := parseMessage(pkg, "msg", name, string(src))
			if err != nil {
				return fmt.Errorf("ros2: %s: %w", p, err)
			}
			r.messages[m.FullName()] = m
			return nil
		}
		req, resp, ok := strings.Cut(string(src), "\n---")
		if !ok {
			return fmt.Errorf("ros2: %s: want a request and a response separated by ---", p)
		}
		s := &Service{Package: pkg, Name: name}
		if s.Request, err = parseMessage(pkg, "srv", name+"_Request", req); err != nil {
			return fmt.Errorf("ros2: %s request: %w", p, err)
		}
		if s.Response, err = parseMessage(pkg, "srv", name+"_Response", strings.TrimPrefix(resp, "\n")); err != nil {
			return fmt.Errorf("ros2: %s response: %w", p, err)
		}
		r.services[pkg+"/"+name] = s
		r.messages[s.Request.FullName()] = s.Request
		r.messages[s.Response.FullName()] = s.Response
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := r.checkReferences(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkReferences fails if a field names a message that is not defined.
func (r *Registry) checkReferences() error {
	for _, m := range r.messages {
		for _, f := range m.Fields {
			if !f.Type.Primitive() {
				if _, ok := r.messages[f.Type.Name]; !ok {
					return fmt.Errorf("ros2: %s field %s: message %s is not defined", m.FullName(), f.Name, f.Type.Name)
				}
			}
		}
	}
	return nil
}

// parseMessage parses the fields of a .msg (or half a .srv). Comments,
// blank lines and constants ("uint8 STATUS_OK=0") are skipped: constants
// are not on the wire. Message types without a package are pkg's own.
func parseMessage(pkg, kind, name, src string) (*Message, error) {
	m := &Message{Package: pkg, Kind: kind, Name: name, Text: src}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) < 2 {
			return nil, fmt.Errorf("line %d: want \"type name\", got %q", n, line)
		}
		if strings.IndexByte(line, '=') > strings.IndexByte(line, ' ') {
			continue // a constant: "uint8 STATUS_OK=0"
		}
		if len(parts) > 2 {
			return nil, fmt.Errorf("line %d: default values are not supported: %q", n, line)
		}
		t, err := parseType(pkg, parts[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		fname := parts[1]
		if !validFieldName(fname) {
			return nil, fmt.Errorf("line %d: field name %q: want lower_snake_case starting with a letter", n, fname)
		}
		if seen[fname] {
			return nil, fmt.Errorf("line %d: field %s given twice", n, fname)
		}
		seen[fname] = true
		m.Fields = append(m.Fields, Field{Name: fname, Type: t})
	}
	return m, sc.Err()
}

func parseType(pkg, s string) (Type, error) {
	var t Type
	if i := strings.IndexByte(s, '['); i >= 0 {
		if !strings.HasSuffix(s, "]") {
			return t, fmt.Errorf("type %q: unbalanced [", s)
		}
		dim := s[i+1 : len(s)-1]
		s = s[:i]
		switch {
		case dim == "":
			t.Sequence = true
		case strings.HasPrefix(dim, "<="):
			return t, fmt.Errorf("type %q: bounded sequences are not supported", s)
		default:
			n, err := strconv.Atoi(dim)
			if err != nil || n <= 0 {
				return t, fmt.Errorf("type %q: array size %q", s, dim)
			}
			t.Size = n
		}
	}
	switch {
	case primitives[s]:
		t.Name = s
	case strings.Contains(s, "/"):
		t.Name = s
	case s == "Header":
		return t, fmt.Errorf("type Header: write std_msgs/Header")
	default:
		t.Name = pkg + "/" + s
	}
	return t, nil
}

func validFieldName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) < 0
}
