package mdns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// DNS record types and classes used here (RFC 1035, RFC 2782, RFC 3596).
const (
	TypeA    uint16 = 1
	TypePTR  uint16 = 12
	TypeTXT  uint16 = 16
	TypeAAAA uint16 = 28
	TypeSRV  uint16 = 33
	TypeANY  uint16 = 255

	ClassIN uint16 = 1
	// cacheFlush marks a record as unique to this host (RFC 6762 §10.2);
	// in a question the same bit asks for a unicast answer (§5.4).
	cacheFlush uint16 = 0x8000

	flagResponse      uint16 = 0x8000
	flagAuthoritative uint16 = 0x0400
	headerLen                = 12
	maxNameLen               = 255
)

// Question is one question of a query.
type Question struct {
	Name    string // lower case, with the trailing dot
	Type    uint16
	Unicast bool // the QU bit: the asker wants a unicast answer
}

// Query is a parsed DNS message that asks.
type Query struct {
	ID        uint16
	Questions []Question
}

var errShort = errors.New("mdns: message truncated")

// ParseQuery decodes a query. Responses (QR set) and messages with an
// opcode other than QUERY are not queries; they return an error, as does
// anything malformed. Answers in the message (known-answer lists) are not
// decoded.
func ParseQuery(b []byte) (Query, error) {
	if len(b) < headerLen {
		return Query{}, errShort
	}
	flags := binary.BigEndian.Uint16(b[2:])
	if flags&flagResponse != 0 {
		return Query{}, errors.New("mdns: a response, not a query")
	}
	if op := (flags >> 11) & 0xF; op != 0 {
		return Query{}, fmt.Errorf("mdns: opcode %d is not QUERY", op)
	}
	q := Query{ID: binary.BigEndian.Uint16(b)}
	n := int(binary.BigEndian.Uint16(b[4:]))
	off := headerLen
	for i := 0; i < n; i++ {
		name, next, err := readName(b, off)
		if err != nil {
			return Query{}, err
		}
		if next+4 > len(b) {
			return Query{}, errShort
		}
		class := binary.BigEndian.Uint16(b[next+2:])
		q.Questions = append(q.Questions, Question{
			Name:    name,
			Type:    binary.BigEndian.Uint16(b[next:]),
			Unicast: class&cacheFlush != 0,
		})
		off = next + 4
	}
	return q, nil
}

// readName decodes the (possibly compressed) name at off and returns it in
// lower case with a trailing dot, and the offset after it in the message.
func readName(b []byte, off int) (string, int, error) {
	var sb strings.Builder
	end := -1 // where the name ends in the message, once a pointer is followed
	for jumps := 0; ; {
		if off >= len(b) {
			return "", 0, errShort
		}
		l := int(b[off])
		switch {
		case l == 0:
			if end < 0 {
				end = off + 1
			}
			if sb.Len() == 0 {
				return ".", end, nil
			}
			return strings.ToLower(sb.String()), end, nil
		case l&0xC0 == 0xC0:
			if off+1 >= len(b) {
				return "", 0, errShort
			}
			if jumps++; jumps > 16 {
				return "", 0, errors.New("mdns: name compression loop")
			}
			if end < 0 {
				end = off + 2
			}
			off = int(binary.BigEndian.Uint16(b[off:]) & 0x3FFF)
		case l&0xC0 != 0:
			return "", 0, fmt.Errorf("mdns: label type 0x%02x unsupported", l&0xC0)
		default:
			if off+1+l > len(b) {
				return "", 0, errShort
			}
			sb.Write(b[off+1 : off+1+l])
			sb.WriteByte('.')
			if sb.Len() > maxNameLen {
				return "", 0, errors.New("mdns: name longer than 255 bytes")
			}
			off += 1 + l
		}
	}
}

// Record is a resource record to send.
type Record struct {
	Name   string // with or without the trailing dot
	Type   uint16
	Unique bool // sets the cache-flush bit (RFC 6762 §10.2)
	TTL    uint32
	// Data is the record's RDATA, built by PTRData, SRVData, TXTData or
	// AData.
	Data []byte
}

// Message is a response to encode.
type Message struct {
	ID         uint16
	Questions  []Question // echoed only in answers to legacy unicast queries
	Answers    []Record
	Additional []Record
}

// Encode writes m as a DNS response (QR and AA set). Names are written in
// full, without compression, which every decoder accepts.
func (m Message) Encode() ([]byte, error) {
	b := make([]byte, headerLen, 512)
	binary.BigEndian.PutUint16(b[0:], m.ID)
	binary.BigEndian.PutUint16(b[2:], flagResponse|flagAuthoritative)
	binary.BigEndian.PutUint16(b[4:], uint16(len(m.Questions)))
	binary.BigEndian.PutUint16(b[6:], uint16(len(m.Answers)))
	binary.BigEndian.PutUint16(b[10:], uint16(len(m.Additional)))
	var err error
	for _, q := range m.Questions {
		if b, err = appendName(b, q.Name); err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint16(b, q.Type)
		b = binary.BigEndian.AppendUint16(b, ClassIN)
	}
	for _, r := range append(append([]Record(nil), m.Answers...), m.Additional...) {
		if b, err = appendName(b, r.Name); err != nil {
			return nil, err
		}
		class := ClassIN
		if r.Unique {
			class |= cacheFlush
		}
		b = binary.BigEndian.AppendUint16(b, r.Type)
		b = binary.BigEndian.AppendUint16(b, class)
		b = binary.BigEndian.AppendUint32(b, r.TTL)
		if len(r.Data) > 0xFFFF {
			return nil, fmt.Errorf("mdns: %s: record data of %d bytes", r.Name, len(r.Data))
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(r.Data)))
		b = append(b, r.Data...)
	}
	return b, nil
}

// appendName writes name as DNS labels.
func appendName(b []byte, name string) ([]byte, error) {
	name = strings.TrimSuffix(name, ".")
	if len(name) > maxNameLen-2 {
		return nil, fmt.Errorf("mdns: name %q longer than 253 bytes", name)
	}
	if name != "" {
		for _, label := range splitLabels(name) {
			if len(label) == 0 || len(label) > 63 {
				return nil, fmt.Errorf("mdns: name %q: label %q must be 1-63 bytes", name, label)
			}
			b = append(b, byte(len(label)))
			b = append(b, label...)
		}
	}
	return append(b, 0), nil
}

// splitLabels splits a name at its dots; a dot inside an instance name is
// written "\." (RFC 6763 §4.3).
func splitLabels(name string) []string {
	var labels []string
	var cur strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '\\' && i+1 < len(name):
			i++
			cur.WriteByte(name[i])
		case c == '.':
			labels = append(labels, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(labels, cur.String())
}

// PTRData is the RDATA of a PTR record pointing at target.
func PTRData(target string) ([]byte, error) { return appendName(nil, target) }

// SRVData is the RDATA of an SRV record (RFC 2782).
func SRVData(priority, weight, port uint16, target string) ([]byte, error) {
	b := binary.BigEndian.AppendUint16(nil, priority)
	b = binary.BigEndian.AppendUint16(b, weight)
	b = binary.BigEndian.AppendUint16(b, port)
	return appendName(b, target)
}

// TXTData is the RDATA of a TXT record: each string length-prefixed; no
// strings is one empty string (RFC 6763 §6.1).
func TXTData(txt []string) ([]byte, error) {
	if len(txt) == 0 {
		return []byte{0}, nil
	}
	var b []byte
	for _, s := range txt {
		if len(s) > 255 {
			return nil, fmt.Errorf("mdns: TXT string %q longer than 255 bytes", s)
		}
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// AData is the RDATA of an A record; ip must be IPv4.
func AData(ip [4]byte) []byte { return ip[:] }
