package livelink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/saint-os/saint/internal/fielderr"
)

// FacePacketVersion is the Live Link Face packet version this receiver
// reads (the app's ARKit mode since Unreal Engine 4.25).
const FacePacketVersion = 6

// DefaultFacePort is the UDP port the Live Link Face app sends to unless
// told otherwise.
const DefaultFacePort = 11111

// FaceBlendShapeCount is the number of values in a packet: ARKit's 52
// blend shapes, then head yaw, pitch, roll and each eye's yaw, pitch, roll.
const FaceBlendShapeCount = 61

// Limits on the strings of a packet. The app's device id is a UUID and its
// subject name a short user-chosen name; Unreal refuses packets longer
// than 256 characters per string, and so does this receiver.
const (
	maxFaceString = 256
	// faceFixedSize is a packet without its two strings: version, two
	// string lengths, frame number, sub-frame, rate numerator and
	// denominator, blend shape count and the values.
	faceFixedSize = 1 + 4 + 4 + 4 + 4 + 4 + 4 + 1 + 4*FaceBlendShapeCount
	// MaxFacePacket is the longest packet the receiver accepts.
	MaxFacePacket = faceFixedSize + 2*maxFaceString
)

// FaceBlendShapeNames are the names of a packet's values, in order, as
// ARKit and Unreal spell them (upper camel case).
var faceBlendShapeNames = [FaceBlendShapeCount]string{
	"EyeBlinkLeft", "EyeLookDownLeft", "EyeLookInLeft", "EyeLookOutLeft", "EyeLookUpLeft",
	"EyeSquintLeft", "EyeWideLeft", "EyeBlinkRight", "EyeLookDownRight", "EyeLookInRight",
	"EyeLookOutRight", "EyeLookUpRight", "EyeSquintRight", "EyeWideRight", "JawForward",
	"JawLeft", "JawRight", "JawOpen", "MouthClose", "MouthFunnel",
	"MouthPucker", "MouthLeft", "MouthRight", "MouthSmileLeft", "MouthSmileRight",
	"MouthFrownLeft", "MouthFrownRight", "MouthDimpleLeft", "MouthDimpleRight", "MouthStretchLeft",
	"MouthStretchRight", "MouthRollLower", "MouthRollUpper", "MouthShrugLower", "MouthShrugUpper",
	"MouthPressLeft", "MouthPressRight", "MouthLowerDownLeft", "MouthLowerDownRight", "MouthUpperUpLeft",
	"MouthUpperUpRight", "BrowDownLeft", "BrowDownRight", "BrowInnerUp", "BrowOuterUpLeft",
	"BrowOuterUpRight", "CheekPuff", "CheekSquintLeft", "CheekSquintRight", "NoseSneerLeft",
	"NoseSneerRight", "TongueOut", "HeadYaw", "HeadPitch", "HeadRoll",
	"LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll", "RightEyeYaw", "RightEyePitch",
	"RightEyeRoll",
}

// FaceBlendShapeNames returns the names of a packet's values in packet
// order, ARKit's spelling ("HeadYaw").
func FaceBlendShapeNames() []string {
	out := make([]string, FaceBlendShapeCount)
	copy(out, faceBlendShapeNames[:])
	return out
}

// FacePacket is one Live Link Face datagram.
type FacePacket struct {
	Version  uint8
	DeviceID string
	Subject  string
	// Frame time: frame number and sub-frame at RateNumerator /
	// RateDenominator frames per second (Unreal's FQualifiedFrameTime).
	FrameNumber     int32
	SubFrame        float32
	RateNumerator   int32
	RateDenominator int32
	// Values are the 61 blend shape weights and rotations, in the order of
	// FaceBlendShapeNames.
	Values [FaceBlendShapeCount]float32
}

// Rate is the frame rate in frames per second (0 if the denominator is 0).
func (p *FacePacket) Rate() float64 {
	if p.RateDenominator == 0 {
		return 0
	}
	return float64(p.RateNumerator) / float64(p.RateDenominator)
}

// Seconds is the frame time in seconds since the capture's timecode zero.
func (p *FacePacket) Seconds() float64 {
	r := p.Rate()
	if r == 0 {
		return 0
	}
	return (float64(p.FrameNumber) + float64(p.SubFrame)) / r
}

// Value returns the named value in either spelling ("HeadYaw", "headYaw").
func (p *FacePacket) Value(name string) (float32, bool) {
	for i, n := range faceBlendShapeNames {
		if n == name || lowerFirst(n) == name {
			return p.Values[i], true
		}
	}
	return 0, false
}

// ErrShortPacket is wrapped by ParseFacePacket's errors when the datagram
// ends inside a field.
var ErrShortPacket = errors.New("packet ends early")

// FieldError is a malformed packet or frame, naming the field at fault:
// the project's field error.
type FieldError = fielderr.Error

// ParseFacePacket decodes one Live Link Face datagram. The datagram must
// be exactly one packet: a short or long one, another version, a blend
// shape count other than 61, strings that are not UTF-8, a rate that is
// not positive or values that are not finite are refused with an error
// naming the field.
func ParseFacePacket(b []byte) (FacePacket, error) {
	p, n, err := parseFace(b)
	if err != nil {
		return FacePacket{}, err
	}
	if n != len(b) {
		return FacePacket{}, &FieldError{Field: "length", Message: fmt.Sprintf("want %d bytes for this packet, got %d", n, len(b))}
	}
	return p, nil
}

// parseFace decodes the packet at the start of b and returns its length.
func parseFace(b []byte) (FacePacket, int, error) {
	var p FacePacket
	r := reader{b: b}
	v, ok := r.u8()
	if !ok {
		return p, 0, short("version")
	}
	if v != FacePacketVersion {
		return p, 0, &FieldError{Field: "version", Message: fmt.Sprintf("want %d, got %d", FacePacketVersion, v)}
	}
	p.Version = v
	var err error
	if p.DeviceID, err = r.str("device_id"); err != nil {
		return p, 0, err
	}
	if p.Subject, err = r.str("subject_name"); err != nil {
		return p, 0, err
	}
	if p.Subject == "" {
		return p, 0, &FieldError{Field: "subject_name", Message: "want a name, got an empty string"}
	}
	fn, ok1 := r.u32()
	sf, ok2 := r.u32()
	num, ok3 := r.u32()
	den, ok4 := r.u32()
	switch {
	case !ok1:
		return p, 0, short("frame_number")
	case !ok2:
		return p, 0, short("sub_frame")
	case !ok3:
		return p, 0, short("rate_numerator")
	case !ok4:
		return p, 0, short("rate_denominator")
	}
	p.FrameNumber, p.SubFrame = int32(fn), math.Float32frombits(sf)
	p.RateNumerator, p.RateDenominator = int32(num), int32(den)
	if !finite(p.SubFrame) {
		return p, 0, &FieldError{Field: "sub_frame", Message: "want a finite number"}
	}
	if p.RateNumerator <= 0 || p.RateDenominator <= 0 {
		return p, 0, &FieldError{Field: "frame_rate", Message: fmt.Sprintf("want a positive rate, got %d/%d", p.RateNumerator, p.RateDenominator)}
	}
	count, ok := r.u8()
	if !ok {
		return p, 0, short("blend_shape_count")
	}
	if count != FaceBlendShapeCount {
		return p, 0, &FieldError{Field: "blend_shape_count", Message: fmt.Sprintf("want %d, got %d", FaceBlendShapeCount, count)}
	}
	for i := range p.Values {
		u, ok := r.u32()
		if !ok {
			return p, 0, short(faceBlendShapeNames[i])
		}
		f := math.Float32frombits(u)
		if !finite(f) {
			return p, 0, &FieldError{Field: faceBlendShapeNames[i], Message: "want a finite number"}
		}
		p.Values[i] = f
	}
	return p, r.off, nil
}

// AppendFacePacket appends p in the app's wire format (big-endian). Version
// 0 is written as FacePacketVersion.
func AppendFacePacket(b []byte, p *FacePacket) []byte {
	v := p.Version
	if v == 0 {
		v = FacePacketVersion
	}
	b = append(b, v)
	b = binary.BigEndian.AppendUint32(b, uint32(len(p.DeviceID)))
	b = append(b, p.DeviceID...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(p.Subject)))
	b = append(b, p.Subject...)
	b = binary.BigEndian.AppendUint32(b, uint32(p.FrameNumber))
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(p.SubFrame))
	b = binary.BigEndian.AppendUint32(b, uint32(p.RateNumerator))
	b = binary.BigEndian.AppendUint32(b, uint32(p.RateDenominator))
	b = append(b, FaceBlendShapeCount)
	for _, f := range p.Values {
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func short(field string) error {
	return &FieldError{Field: field, Message: "packet ends inside this field", Err: ErrShortPacket}
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// reader reads big-endian fields from a packet.
type reader struct {
	b   []byte
	off int
}

func (r *reader) u8() (uint8, bool) {
	if r.off+1 > len(r.b) {
		return 0, false
	}
	v := r.b[r.off]
	r.off++
	return v, true
}

func (r *reader) u32() (uint32, bool) {
	if r.off+4 > len(r.b) {
		return 0, false
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, true
}

// str reads an int32 length and that many bytes of UTF-8.
func (r *reader) str(field string) (string, error) {
	n, ok := r.u32()
	if !ok {
		return "", short(field + "_length")
	}
	if int32(n) < 0 || n > maxFaceString {
		return "", &FieldError{Field: field + "_length", Message: fmt.Sprintf("want 0 to %d bytes, got %d", maxFaceString, int32(n))}
	}
	if r.off+int(n) > len(r.b) {
		return "", short(field)
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(s) {
		return "", &FieldError{Field: field, Message: "want UTF-8 text"}
	}
	return string(s), nil
}
