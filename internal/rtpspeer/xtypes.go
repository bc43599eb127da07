package rtpspeer

import (
	"crypto/md5"
	"encoding/binary"
)

// XTypes type kinds this package puts in type objects.
const (
	TKInt8    = 0x0C // XTypes 1.3; not in Cyclone DDS 0.10
	TKUint8   = 0x0D // XTypes 1.3; not in Cyclone DDS 0.10
	TKInt32   = 0x04
	TKFloat64 = 0x0A

	tkNone      = 0x00
	tkStructure = 0x51
	ekMinimal   = 0xF1
	ekComplete  = 0xF2
)

// Member is one member of a struct type object: its name and its type's
// kind (a primitive's, TKInt8 …).
type Member struct {
	Name string
	Kind byte
}

// xcdr2 writes XCDR2 little-endian, aligning to at most 4 bytes from the
// start of the buffer, as XCDR2 does.
type xcdr2 struct{ b []byte }

func (w *xcdr2) align(n int) {
	for len(w.b)%n != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *xcdr2) u8(v byte)      { w.b = append(w.b, v) }
func (w *xcdr2) bytes(p []byte) { w.b = append(w.b, p...) }
func (w *xcdr2) u16(v uint16)   { w.align(2); w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *xcdr2) u32(v uint32)   { w.align(4); w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *xcdr2) dheader() int   { w.u32(0); return len(w.b) }
func (w *xcdr2) patch(start int) {
	binary.LittleEndian.PutUint32(w.b[start-4:], uint32(len(w.b)-start))
}

// emheader starts a member of a mutable struct whose length follows in a
// NEXTINT (LC 4); patch the returned position after the member.
func (w *xcdr2) emheader(id uint32) int {
	w.u32(4<<28 | id)
	return w.dheader()
}

// HashID is the member id @hashid gives a member named name: the first
// four bytes of the name's MD5, little-endian, in 28 bits.
func HashID(name string) uint32 {
	h := md5.Sum([]byte(name))
	return binary.LittleEndian.Uint32(h[:4]) & 0x0FFFFFFF
}

// MinimalStruct is the XCDR2 serialization of the minimal TypeObject of a
// final struct with members, as DDS-XTypes 1.3 (7.3.4) defines it: the
// bytes whose MD5 gives the type's identifier and that a TypeLookup reply
// carries.
func MinimalStruct(members []Member) []byte {
	w := &xcdr2{}
	obj := w.dheader() // TypeObject is an appendable union
	w.u8(ekMinimal)
	w.u8(tkStructure)
	w.u16(0x0001) // StructTypeFlag IS_FINAL
	hdr := w.dheader()
	w.u8(tkNone) // no base type
	w.patch(hdr)
	seq := w.dheader()
	w.u32(uint32(len(members)))
	for i, m := range members {
		mem := w.dheader()
		w.u32(uint32(i))
		w.u16(0x0001) // TRY_CONSTRUCT1
		w.u8(m.Kind)
		h := md5.Sum([]byte(m.Name))
		w.bytes(h[:4])
		w.patch(mem)
	}
	w.patch(seq)
	w.patch(obj)
	return w.b
}

// TypeID is the 14-byte equivalence hash of a serialized type object.
func TypeID(typeObject []byte) [14]byte {
	h := md5.Sum(typeObject)
	var id [14]byte
	copy(id[:], h[:14])
	return id
}

// TypeInformation is the value of PID_TYPE_INFORMATION naming the minimal
// and the complete type by their hashes and serialized sizes, with no
// dependent types.
func TypeInformation(minimal [14]byte, minimalSize uint32, complete [14]byte, completeSize uint32) []byte {
	w := &xcdr2{}
	all := w.dheader()
	for _, ti := range []struct {
		id   uint32
		ek   byte
		hash [14]byte
		size uint32
	}{{0x1001, ekMinimal, minimal, minimalSize}, {0x1002, ekComplete, complete, completeSize}} {
		m := w.emheader(ti.id)
		deps := w.dheader()
		withSize := w.dheader()
		w.u8(ti.ek)
		w.bytes(ti.hash[:])
		w.u32(ti.size)
		w.patch(withSize)
		w.u32(0) // dependent_typeid_count
		seq := w.dheader()
		w.u32(0)
		w.patch(seq)
		w.patch(deps)
		w.patch(m)
	}
	w.patch(all)
	return w.b
}

// getTypesHashID is TypeLookup_getTypes_HashId, @hashid("getTypes").
var getTypesHashID = HashID("getTypes")

// TypeLookupReply is the XCDR2 body of a TypeLookup_Reply to the request
// requestWriter sent as seq, answering getTypes with one type: the
// minimal type id and its object. The reply's unions are appendable (a
// DHEADER each) and its sequences members of a mutable struct whose
// length doubles as their DHEADER (LC 5), as Cyclone DDS writes them.
func TypeLookupReply(requestWriter [16]byte, seq uint64, id [14]byte, typeObject []byte) []byte {
	w := &xcdr2{}
	w.bytes(requestWriter[:])
	w.u32(uint32(seq >> 32))
	w.u32(uint32(seq))
	w.u32(0) // REMOTE_EX_OK
	ret := w.dheader()
	w.u32(getTypesHashID) // TypeLookup_Return: getType
	res := w.dheader()
	w.u32(0)           // TypeLookup_getTypes_Result: DDS_RETCODE_OK
	out := w.dheader() // TypeLookup_getTypes_Out is mutable
	w.u32(5<<28 | HashID("types"))
	types := w.dheader()
	w.u32(1)
	w.u8(ekMinimal)
	w.bytes(id[:])
	w.align(4)
	w.bytes(typeObject)
	w.patch(types)
	w.u32(5<<28 | HashID("complete_to_minimal"))
	c2m := w.dheader()
	w.u32(0)
	w.patch(c2m)
	w.patch(out)
	w.patch(res)
	w.patch(ret)
	return w.b
}
