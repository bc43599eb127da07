package router

import "github.com/saint-os/saint/bus/msg"

// SubjectRegistry is what the router's list_livelink_sources and
// get_livelink_subject commands read: the LiveLink receiver's registry of
// subjects. Its methods are called from WebSocket handler goroutines, so
// they must be safe for concurrent use.
type SubjectRegistry interface {
	// Subjects lists the known subjects, in a stable order.
	Subjects() []msg.LiveLinkSubject
	// Subject returns one subject by name.
	Subject(name string) (msg.LiveLinkSubject, bool)
}

// emptyRegistry is the registry of a server without a LiveLink receiver.
type emptyRegistry struct{}

func (emptyRegistry) Subjects() []msg.LiveLinkSubject { return []msg.LiveLinkSubject{} }

func (emptyRegistry) Subject(string) (msg.LiveLinkSubject, bool) {
	return msg.LiveLinkSubject{}, false
}
