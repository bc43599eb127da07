// Package mdns advertises saint-server on the local network with multicast
// DNS (RFC 6762) and DNS-based service discovery (RFC 6763), so nodes and
// browsers find it as saint-server.local and as a _saint._tcp service
// without a DNS server.
//
// It is a responder only, built on the standard library: it answers
// questions for the host name (A), the service type (PTR), the service
// instance (SRV, TXT) and the DNS-SD service enumeration, announces the
// records when it starts and says goodbye (TTL 0) when it stops. It never
// resolves names itself and keeps no cache, and it does not probe for
// conflicts (RFC 6762 §8.1): on the robot's networks saint-server.local is
// the server's alone.
//
// The wire encoding is written here rather than taken from a library: it
// is a few hundred lines, it is tested byte for byte against packets built
// by hand from the RFCs, and it keeps the server's dependencies to those
// the project already has.
package mdns
