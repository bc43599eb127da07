// Package camera takes the head camera's frames off the robot's bus and
// out to clients: an MJPEG stream over HTTP and a WebSocket topic.
//
// The head role publishes sensor_msgs/Image rgb8 frames on
// /saint/head/camera/image_raw while its camera is enabled ("head camera"
// command). The server encodes each (at most MaxFPS a second) as a JPEG,
// scaled down to at most MaxWidth pixels wide, and:
//
//   - publishes it on the WebSocket topic "camera" as {"camera": "head",
//     "width", "height", "seq", "stamp", "jpeg": BASE64}; the subscription's
//     rate_hz chooses the rate a client gets;
//   - serves GET /api/camera/head as multipart/x-mixed-replace (MJPEG, what
//     browsers, VLC and ffmpeg play), behind the API token like every /api
//     route: "Authorization: Bearer TOKEN". ?fps=N (1–30) lowers the rate
//     and ?width=N (16–MaxWidth) the size for that client; a client that
//     reads slowly gets the newest frame, never a backlog.
package camera
