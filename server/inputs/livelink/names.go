package livelink

import (
	"unicode"
	"unicode/utf8"

	"github.com/saint-os/saint/bus/msg"
)

// ARKit blend shape names come in two spellings: Unreal and the Live Link
// Face app write "HeadYaw", ARKit's own API and the shipped routes write
// "headYaw". A face frame carries both, so a route may use either.

// faceLowerNames are faceBlendShapeNames in ARKit's lower-camel spelling
// (computed once, never changed).
var faceLowerNames = func() (out [FaceBlendShapeCount]string) {
	for i, n := range faceBlendShapeNames {
		out[i] = lowerFirst(n)
	}
	return out
}()

// arkitAliases maps each ARKit name, in either spelling, to the other.
func arkitAliases() map[string]string {
	m := make(map[string]string, 2*FaceBlendShapeCount)
	for _, n := range faceBlendShapeNames {
		l := lowerFirst(n)
		m[n], m[l] = l, n
	}
	return m
}

// lowerFirst lower-cases the first letter: "HeadYaw" → "headYaw".
func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// addARKitAliases appends, for every ARKit name among f's properties, the
// other spelling with the same value, unless f already has it.
func addARKitAliases(f *msg.LiveLinkFrame, aliases map[string]string) {
	have := make(map[string]bool, len(f.PropertyNames))
	for _, n := range f.PropertyNames {
		have[n] = true
	}
	n := len(f.PropertyNames)
	for i := 0; i < n && i < len(f.PropertyValues); i++ {
		other, ok := aliases[f.PropertyNames[i]]
		if ok && !have[other] {
			f.PropertyNames = append(f.PropertyNames, other)
			f.PropertyValues = append(f.PropertyValues, f.PropertyValues[i])
			have[other] = true
		}
	}
}

// canonicalProperties lists f's property names without the aliases that
// addARKitAliases added: each ARKit name once, in the spelling it came in.
func canonicalProperties(names []string, aliases map[string]string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if other, ok := aliases[n]; ok && seen[other] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// FaceFrame turns a Live Link Face packet into the router's frame: a face
// subject named as in the app, the packet's frame number, and each value
// under its ARKit name in both spellings. Timestamp is the arrival time,
// seconds since the Unix epoch, on the receiver's clock.
func FaceFrame(p *FacePacket, arrival float64) msg.LiveLinkFrame {
	f := msg.LiveLinkFrame{
		SubjectName:    p.Subject,
		SubjectType:    msg.SubjectFace,
		FrameNumber:    uint64(uint32(p.FrameNumber)),
		Timestamp:      arrival,
		PropertyNames:  make([]string, 0, 2*FaceBlendShapeCount),
		PropertyValues: make([]float32, 0, 2*FaceBlendShapeCount),
	}
	for i, n := range faceBlendShapeNames {
		f.PropertyNames = append(f.PropertyNames, n)
		f.PropertyValues = append(f.PropertyValues, p.Values[i])
	}
	for i, n := range faceLowerNames {
		f.PropertyNames = append(f.PropertyNames, n)
		f.PropertyValues = append(f.PropertyValues, p.Values[i])
	}
	f.Transform.Rotation.W = 1
	return f
}
