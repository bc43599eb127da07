package rtpspeer

import (
	"encoding/hex"
	"testing"
)

// The hashes Cyclone DDS's idlc computed for geometry_msgs/Point
// (ros2/cyclone/geometry_msgs.c: MINIMAL 5e7397e7e86440df64af76cd4cbc,
// 71 bytes) come out of the same members here: the serialization is the
// one XTypes peers hash.
func TestMinimalStructMatchesIdlc(t *testing.T) {
	obj := MinimalStruct([]Member{{"x", TKFloat64}, {"y", TKFloat64}, {"z", TKFloat64}})
	if len(obj) != 71 {
		t.Errorf("type object is %d bytes, idlc's is 71", len(obj))
	}
	id := TypeID(obj)
	if got := hex.EncodeToString(id[:]); got != "5e7397e7e86440df64af76cd4cbc" {
		t.Errorf("type id %s, idlc's is 5e7397e7e86440df64af76cd4cbc", got)
	}
}

func TestHashIDOfGetTypes(t *testing.T) {
	if getTypesHashID != 0x018252d3 {
		t.Errorf("@hashid(getTypes) = %#x, the XTypes spec's is 0x018252d3", getTypesHashID)
	}
}

// idlc's TYPE_INFO_CDR for geometry_msgs/Point, byte for byte.
func TestTypeInformationMatchesIdlc(t *testing.T) {
	want, _ := hex.DecodeString("6000000001100040280000002400000014000000" +
		"f15e7397e7e86440df64af76cd4cbc004700000000000000040000000000000002100040280000002400000014000000" +
		"f204ac28f91964235dc981e3f8fadf007c000000000000000400000000000000")
	var min, compl [14]byte
	hex.Decode(min[:], []byte("5e7397e7e86440df64af76cd4cbc"))
	hex.Decode(compl[:], []byte("04ac28f91964235dc981e3f8fadf"))
	got := TypeInformation(min, 71, compl, 124)
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Errorf("TypeInformation\n got %x\nwant %x", got, want)
	}
}

// Cyclone DDS 0.10.2's own serialization (dds_stream_write with
// DDS_Builtin_TypeLookup_Reply_desc) of the reply carrying the int8/uint8
// struct, byte for byte.
func TestTypeLookupReplyMatchesCyclone(t *testing.T) {
	obj := MinimalStruct([]Member{{"speed", TKInt8}, {"mode", TKUint8}})
	want := "00000000000000000000000000000000000000000000000000000000" +
		"70000000d3528201680000000000000060000000d14a80524b00000001000000" +
		"f16ce4f451b2104c07f1874bbcb65b00" + hex.EncodeToString(obj) + "0077658e5b0400000000000000"
	if got := hex.EncodeToString(TypeLookupReply([16]byte{}, 0, TypeID(obj), obj)); got != want {
		t.Errorf("reply\n got %s\nwant %s", got, want)
	}
}
