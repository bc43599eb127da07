// Package v4l2 is the Linux Video4Linux2 backend of hal/camera: the Pi's
// camera (through the libcamera V4L2 compatibility node or the bcm2835
// legacy driver) or a USB UVC camera at /dev/videoN, captured with
// memory-mapped streaming I/O.
//
// Open asks the driver for the capabilities (VIDIOC_QUERYCAP: a capture
// device that streams), sets the format (VIDIOC_S_FMT: YUYV 4:2:2, or
// Motion-JPEG when the driver will not give YUYV) at the configured
// resolution, asks for the frame rate (VIDIOC_S_PARM; drivers that cannot
// set it keep theirs), requests buffers (VIDIOC_REQBUFS), maps each
// (VIDIOC_QUERYBUF, mmap), queues them (VIDIOC_QBUF) and starts the stream
// (VIDIOC_STREAMON). A goroutine at the edge waits in poll(2) for a filled
// buffer, dequeues it (VIDIOC_DQBUF), converts it to RGB, gives the buffer
// back to the driver and posts the frame into the executor; while one frame
// waits there, newer ones are dropped rather than queued (the frame's Seq
// shows the gap), so a busy executor never falls further behind. Close wakes
// the goroutine through an eventfd, stops the stream, unmaps and closes.
//
// The ioctl structures are Go structs laid out as the kernel's
// (include/uapi/linux/videodev2.h) on both 64-bit (arm64, amd64) and
// 32-bit (arm) Linux; the tests check every field offset and the request
// numbers against the header's. A driver may give a different resolution
// than asked: frames carry the size the driver chose.
//
// The hardware smoke test needs a camera and runs with -tags hardware
// (SAINT_V4L2_DEVICE names the device, /dev/video0 by default).
package v4l2
