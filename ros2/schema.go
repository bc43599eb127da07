package ros2

import (
	"fmt"
	"strings"
)

// TypeName is the name ROS 2 tools know the type by, "pkg/kind/Name":
// "nav_msgs/msg/Odometry", the schema name rosbag2 gives a channel.
func (m *Message) TypeName() string { return m.Package + "/" + m.Kind + "/" + m.Name }

// SchemaSeparator starts each dependency of a ros2msg schema, followed by
// "MSG: pkg/Name" on the next line.
const SchemaSeparator = "================================================================================"

// Schema is m's definition in the "ros2msg" schema encoding that rosbag2
// writes into MCAP files and Foxglove reads: m's own text, then the text
// of every message it uses, directly or not, each once, in the order
// first used, after a line of 80 '=' and a line "MSG: pkg/Name".
func (r *Registry) Schema(m *Message) []byte {
	var b strings.Builder
	b.WriteString(strings.TrimRight(m.Text, "\n"))
	b.WriteByte('\n')
	seen := map[string]bool{m.FullName(): true}
	queue := []*Message{m}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, f := range cur.Fields {
			if f.Type.Primitive() || seen[f.Type.Name] {
				continue
			}
			seen[f.Type.Name] = true
			dep, _ := r.Message(f.Type.Name) // Load checked that it exists
			b.WriteString(SchemaSeparator + "\nMSG: " + dep.FullName() + "\n")
			b.WriteString(strings.TrimRight(dep.Text, "\n"))
			b.WriteByte('\n')
			queue = append(queue, dep)
		}
	}
	return []byte(b.String())
}

// ParseSchema parses a ros2msg schema (as Schema writes it, or rosbag2)
// of the message name ("pkg/msg/Name" or "pkg/Name") into a registry of
// the messages it defines, and returns the top-level one: a recording
// decodes with the definitions it was written with.
func ParseSchema(name string, data []byte) (*Registry, *Message, error) {
	pkg, typ, ok := splitTypeName(name)
	if !ok {
		return nil, nil, fmt.Errorf("ros2: schema name %q: want pkg/msg/Name", name)
	}
	r := &Registry{messages: map[string]*Message{}, services: map[string]*Service{}}
	sections := strings.Split(string(data), "\n"+SchemaSeparator+"\n")
	top, err := parseMessage(pkg, "msg", typ, sections[0])
	if err != nil {
		return nil, nil, fmt.Errorf("ros2: schema %s: %w", name, err)
	}
	r.messages[top.FullName()] = top
	for _, sec := range sections[1:] {
		head, text, _ := strings.Cut(sec, "\n")
		dep, ok := strings.CutPrefix(strings.TrimSpace(head), "MSG: ")
		if !ok {
			return nil, nil, fmt.Errorf("ros2: schema %s: a section starts with %q, want \"MSG: pkg/Name\"", name, head)
		}
		dpkg, dtyp, ok := splitTypeName(dep)
		if !ok {
			return nil, nil, fmt.Errorf("ros2: schema %s: section %q: want pkg/Name", name, dep)
		}
		m, err := parseMessage(dpkg, "msg", dtyp, text)
		if err != nil {
			return nil, nil, fmt.Errorf("ros2: schema %s, %s: %w", name, dep, err)
		}
		r.messages[m.FullName()] = m
	}
	if err := r.checkReferences(); err != nil {
		return nil, nil, err
	}
	return r, top, nil
}

// splitTypeName splits "pkg/msg/Name" or "pkg/Name".
func splitTypeName(s string) (pkg, name string, ok bool) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], true
	case len(parts) == 3 && parts[0] != "" && parts[1] == "msg" && parts[2] != "":
		return parts[0], parts[2], true
	}
	return "", "", false
}
