package bus

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidName is wrapped by every *NameError, so callers can test for a
// rejected topic or service name with errors.Is.
var ErrInvalidName = errors.New("bus: invalid name")

// NameError reports a topic or service name the bus cannot carry.
type NameError struct {
	Kind   string // "topic" or "service"
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return "bus: invalid " + e.Kind + " name " + quote(e.Name) + ": " + e.Reason
}

// Unwrap returns ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }

// Wildcards in topic filters. They follow MQTT spelling, which bus/msg's
// names use ("/saint/nodes/+/status"), and NATS meaning: "+" is exactly
// one segment, "#" (last segment only) is one or more segments, so
// "/saint/#" matches "/saint/head/state" but not "/saint" itself.
const (
	WildcardOne  = "+"
	WildcardMany = "#"
)

// serviceToken is the first subject token of every service request. Topics
// and services are separate namespaces, as in ROS 2: a topic subscriber never
// sees requests, and a subscriber to a topic with a service's name does not
// count as a responder (which would turn ErrNoResponders into a timeout).
// A topic's first segment may not start with '_', so no topic subject or
// filter can reach this namespace, nor the transport's reply inboxes
// (NATS's "_INBOX.").
const serviceToken = "_srv"

// TopicSubject checks a topic name or filter and returns its transport
// subject: "/saint/nodes/+/status" becomes "saint.nodes.*.status" and
// "/saint/#" becomes "saint.>".
//
// A name starts with '/' and has one or more segments of ASCII letters,
// digits, '_' and '-'. The first segment must be a plain name not starting
// with '_' (reserved for the transport); when filter is true, later segments
// may be "+" and the last may be "#".
func TopicSubject(name string, filter bool) (string, error) {
	subject, _, err := toSubject("topic", name, filter, "")
	return subject, err
}

// ServiceSubject checks a service name and returns the subject its requests
// travel on: "/saint/nodes/adopt" becomes "_srv.saint.nodes.adopt".
// Service names follow the rules of topic names without wildcards.
func ServiceSubject(name string) (string, error) {
	subject, _, err := toSubject("service", name, false, serviceToken+".")
	return subject, err
}

// SubjectTopic is the inverse of TopicSubject: "saint.nodes.n1.status"
// becomes "/saint/nodes/n1/status", "*" becomes "+" and ">" becomes "#".
// It does not validate; it is meant for subjects the bus produced.
func SubjectTopic(subject string) string {
	subject = strings.TrimPrefix(subject, serviceToken+".")
	var b strings.Builder
	b.Grow(len(subject) + 1)
	for _, tok := range strings.Split(subject, ".") {
		b.WriteByte('/')
		switch tok {
		case "*":
			b.WriteString(WildcardOne)
		case ">":
			b.WriteString(WildcardMany)
		default:
			b.WriteString(tok)
		}
	}
	return b.String()
}

// toSubject validates name and maps it to prefix + dotted subject in one
// pass, with one allocation: it runs on every Publish. wild reports whether
// the name had wildcards.
func toSubject(kind, name string, filter bool, prefix string) (subject string, wild bool, err error) {
	bad := func(reason string) (string, bool, error) {
		return "", false, &NameError{Kind: kind, Name: name, Reason: reason}
	}
	if !strings.HasPrefix(name, "/") {
		return bad("must start with '/'")
	}
	if len(name) == 1 {
		return bad("no segments")
	}
	b := make([]byte, 0, len(prefix)+len(name)-1)
	b = append(b, prefix...)
	rest := name[1:]
	for i := 0; ; i++ {
		seg, tail, more := strings.Cut(rest, "/")
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == WildcardOne || seg == WildcardMany:
			if !filter {
				return bad("wildcard " + quote(seg) + " is only allowed in subscriptions and served services")
			}
			if i == 0 {
				return bad("the first segment cannot be a wildcard")
			}
			wild = true
			if seg == WildcardMany {
				if more {
					return bad("'#' must be the last segment")
				}
				b = append(b, '>')
			} else {
				b = append(b, '*')
			}
		default:
			if i == 0 && seg[0] == '_' {
				return bad("the first segment cannot start with '_'")
			}
			for j := 0; j < len(seg); j++ {
				if !nameByte(seg[j]) {
					return bad("segment " + quote(seg) + " contains " + quoteByte(seg[j]))
				}
			}
			b = append(b, seg...)
		}
		if !more {
			break
		}
		b = append(b, '.')
		rest = tail
	}
	return string(b), wild, nil
}

// nameByte reports whether c may appear in a name segment. The set is the
// intersection of what ROS 2 names, NATS subjects and URL paths accept
// without escaping (plus '-', which node ids such as "pi-a1b2c3d4" use).
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func quote(s string) string { return strconv.Quote(s) }

func quoteByte(c byte) string {
	switch c {
	case ' ':
		return "a space"
	case '\t':
		return "a tab"
	}
	if c < ' ' || c > '~' {
		return "a non-printable or non-ASCII character"
	}
	return "'" + string(rune(c)) + "'"
}
