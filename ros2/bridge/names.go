package bridge

import (
	"fmt"
	"path"
	"strings"
)

// ROSNodeName maps a node id to a ROS 2 name segment, reversibly
// (NodeID undoes it). Letters and digits stay; '-' becomes "_2d" and
// '_' becomes "_5f" (their hex codes), so "sim-head" is "sim_2dhead"; a
// leading digit d becomes "n_3d", since a ROS name segment may not start
// with a digit. Ids that are letters and digits only are unchanged.
func ROSNodeName(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 0 && c >= '0' && c <= '9':
			fmt.Fprintf(&b, "n_%02x", c)
		case c == '-' || c == '_':
			fmt.Fprintf(&b, "_%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NodeID undoes ROSNodeName. It fails on a segment ROSNodeName cannot
// have written.
func NodeID(seg string) (string, error) {
	var b strings.Builder
	s := seg
	// "n_3d" can only be a leading digit: '_' itself is written "_5f".
	if len(s) >= 4 && strings.HasPrefix(s, "n_3") && s[3] >= '0' && s[3] <= '9' {
		b.WriteByte(s[3])
		s = s[4:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' {
			b.WriteByte(c)
			continue
		}
		if i+3 > len(s) {
			return "", fmt.Errorf("bridge: %q is not a mapped node id", seg)
		}
		switch s[i+1 : i+3] {
		case "2d":
			b.WriteByte('-')
		case "5f":
			b.WriteByte('_')
		default:
			return "", fmt.Errorf("bridge: %q is not a mapped node id", seg)
		}
		i += 2
	}
	return b.String(), nil
}

// Filter decides which ROS names are bridged: a name is bridged when it
// matches an Allow pattern (or Allow is empty) and no Deny pattern.
// Patterns are path.Match patterns over the ROS name ("/saint/balance/*"),
// and a pattern ending in "/**" matches everything below its prefix
// ("/saint/arms/**").
type Filter struct {
	Allow, Deny []string
}

// Validate checks the patterns' syntax.
func (f Filter) Validate() error {
	for _, p := range append(append([]string(nil), f.Allow...), f.Deny...) {
		if _, err := path.Match(strings.TrimSuffix(p, "/**"), "/"); err != nil {
			return fmt.Errorf("bridge: pattern %q: %w", p, err)
		}
	}
	return nil
}

// Bridged reports whether name is bridged.
func (f Filter) Bridged(name string) bool {
	for _, p := range f.Deny {
		if match(p, name) {
			return false
		}
	}
	if len(f.Allow) == 0 {
		return true
	}
	for _, p := range f.Allow {
		if match(p, name) {
			return true
		}
	}
	return false
}

func match(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		return name == prefix || strings.HasPrefix(name, prefix+"/")
	}
	ok, _ := path.Match(pattern, name)
	return ok
}
