package msg

// Image is sensor_msgs/Image, the head camera's frames on
// TopicHeadCameraImageRaw. Data holds Height rows of Step bytes each; in
// JSON it is base64, as rosbridge encodes uint8[].
type Image struct {
	Header      Header `json:"header"`
	Height      uint32 `json:"height"`
	Width       uint32 `json:"width"`
	Encoding    string `json:"encoding"` // ImageRGB8 ...
	IsBigEndian uint8  `json:"is_bigendian"`
	Step        uint32 `json:"step"` // row length in bytes
	Data        []byte `json:"data"`
}

// Image encodings (sensor_msgs/image_encodings).
const (
	ImageRGB8  = "rgb8"
	ImageBGR8  = "bgr8"
	ImageMono8 = "mono8"
	ImageYUYV  = "yuv422_yuy2"
)

// SensorReading is one value from a node's sensors.
type SensorReading struct {
	Name  string  `json:"name"`  // "proximity", "ambient_light", "imu_pitch" ...
	Value float64 `json:"value"` // in Unit
	Unit  string  `json:"unit"`  // SI symbol: "m", "lx", "rad", "degC"
	// Valid is false when the sensor did not answer or is out of range;
	// Value is then meaningless.
	Valid bool `json:"valid"`
}

// SensorReadings is what a node publishes on its sensors topic
// (TopicHeadSensors): heads carry different sensors (proximity, ambient
// light, etc.), so each reading carries its own name and unit and a head
// reports whatever it has fitted.
type SensorReadings struct {
	Header   Header          `json:"header"`
	Readings []SensorReading `json:"readings"`
}
