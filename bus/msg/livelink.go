package msg

// LiveLink subject types.
const (
	SubjectAnimation = "animation" // bone transforms: arm joints, full body
	SubjectTransform = "transform" // a tracked object: head, one joint
	SubjectFace      = "face"      // ARKit blend shape weights
	SubjectCamera    = "camera"    // transform + field of view
)

// LiveLinkFrame is LiveLinkFrame.msg: one frame of one subject, as the
// server's LiveLink receiver hands it to the router on TopicLiveLinkFrames.
// PropertyNames and PropertyValues are parallel: blend shape or bone names
// and their values. Transform is used by transform and camera subjects.
type LiveLinkFrame struct {
	SubjectName    string    `json:"subject_name"` // "FaceCapture", "UE_Character"
	SubjectType    string    `json:"subject_type"` // SubjectFace ...
	FrameNumber    uint64    `json:"frame_number"`
	Timestamp      float64   `json:"timestamp"` // seconds since the Unix epoch
	PropertyNames  []string  `json:"property_names"`
	PropertyValues []float32 `json:"property_values"`
	Transform      Transform `json:"transform"`
}

// Property returns the value of the named property and whether the frame
// has it.
func (f *LiveLinkFrame) Property(name string) (float32, bool) {
	for i, n := range f.PropertyNames {
		if n == name && i < len(f.PropertyValues) {
			return f.PropertyValues[i], true
		}
	}
	return 0, false
}

// LiveLinkSubject is LiveLinkSubject.msg: what the server knows about one
// LiveLink subject. Its fields are those of the router's
// list_livelink_sources response (docs/api.md), so that response is a list
// of these. Published on TopicLiveLinkSubjects when the registry changes.
type LiveLinkSubject struct {
	SubjectName string   `json:"subject_name"`
	SubjectType string   `json:"subject_type"`
	SourceIP    string   `json:"source_ip"`
	LastFrame   float64  `json:"last_frame"` // time of the latest frame, seconds since the Unix epoch
	FrameRate   float64  `json:"frame_rate"` // measured, frames per second
	Properties  []string `json:"properties"` // blend shape or bone names
}
