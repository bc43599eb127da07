//go:build linux

package v4l2

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Request numbers: _IOC(dir, 'V', nr, size) as asm-generic/ioctl.h
// encodes them (dir in bits 30–31, size in 16–29, type 8–15, nr 0–7).
const (
	iocWrite = 1
	iocRead  = 2
)

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | 'V'<<8 | nr
}

var (
	vidiocQueryCap  = ioc(iocRead, 0, unsafe.Sizeof(capability{}))
	vidiocSFmt      = ioc(iocRead|iocWrite, 5, unsafe.Sizeof(format{}))
	vidiocReqBufs   = ioc(iocRead|iocWrite, 8, unsafe.Sizeof(requestBuffers{}))
	vidiocQueryBuf  = ioc(iocRead|iocWrite, 9, unsafe.Sizeof(buffer{}))
	vidiocQBuf      = ioc(iocRead|iocWrite, 15, unsafe.Sizeof(buffer{}))
	vidiocDQBuf     = ioc(iocRead|iocWrite, 17, unsafe.Sizeof(buffer{}))
	vidiocStreamOn  = ioc(iocWrite, 18, unsafe.Sizeof(int32(0)))
	vidiocStreamOff = ioc(iocWrite, 19, unsafe.Sizeof(int32(0)))
	vidiocSParm     = ioc(iocRead|iocWrite, 22, unsafe.Sizeof(streamParm{}))
)

// Constants of videodev2.h.
const (
	bufTypeVideoCapture = 1
	memoryMMap          = 1
	fieldNone           = 1

	capVideoCapture = 0x00000001
	capStreaming    = 0x04000000
	capDeviceCaps   = 0x80000000

	bufFlagTimestampMask      = 0x0000e000
	bufFlagTimestampMonotonic = 0x00002000
)

// fourcc is v4l2_fourcc: four characters, little-endian.
func fourcc(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// Pixel formats the backend converts.
var (
	PixelFormatYUYV  = fourcc("YUYV")
	PixelFormatMJPEG = fourcc("MJPG")
)

// capability is struct v4l2_capability (104 bytes).
type capability struct {
	driver       [16]byte
	card         [32]byte
	busInfo      [32]byte
	version      uint32
	capabilities uint32
	deviceCaps   uint32
	reserved     [3]uint32
}

// pixFormat is struct v4l2_pix_format (48 bytes).
type pixFormat struct {
	width        uint32
	height       uint32
	pixelformat  uint32
	field        uint32
	bytesperline uint32
	sizeimage    uint32
	colorspace   uint32
	priv         uint32
	flags        uint32
	ycbcrEnc     uint32
	quantization uint32
	xferFunc     uint32
}

// format is struct v4l2_format: a type and a 200-byte union whose
// members hold pointers (struct v4l2_window), so it is pointer-aligned:
// 208 bytes on 64-bit, 204 on 32-bit.
type format struct {
	typ uint32
	fmt [200 / unsafe.Sizeof(uintptr(0))]uintptr
}

// pix is the union's v4l2_pix_format member.
func (f *format) pix() *pixFormat { return (*pixFormat)(unsafe.Pointer(&f.fmt)) }

// requestBuffers is struct v4l2_requestbuffers (20 bytes).
type requestBuffers struct {
	count        uint32
	typ          uint32
	memory       uint32
	capabilities uint32
	flags        uint8
	reserved     [3]uint8
}

// timecode is struct v4l2_timecode (16 bytes).
type timecode struct {
	typ      uint32
	flags    uint32
	frames   uint8
	seconds  uint8
	minutes  uint8
	hours    uint8
	userbits [4]uint8
}

// buffer is struct v4l2_buffer: 88 bytes on 64-bit, 68 on 32-bit. m is
// the union of offset (for MMAP), userptr, planes and fd.
type buffer struct {
	index     uint32
	typ       uint32
	bytesused uint32
	flags     uint32
	field     uint32
	timestamp unix.Timeval
	timecode  timecode
	sequence  uint32
	memory    uint32
	m         uintptr
	length    uint32
	reserved2 uint32
	requestFD int32
}

// offset is the union's MMAP offset member (the first 32 bits, on both
// byte orders the Pi runs).
func (b *buffer) offset() uint32 { return *(*uint32)(unsafe.Pointer(&b.m)) }

// captureParm is struct v4l2_captureparm (40 bytes).
type captureParm struct {
	capability   uint32
	capturemode  uint32
	timeperframe struct{ numerator, denominator uint32 }
	extendedmode uint32
	readbuffers  uint32
	reserved     [4]uint32
}

// streamParm is struct v4l2_streamparm: a type and a 200-byte union
// without pointers (204 bytes).
type streamParm struct {
	typ  uint32
	parm [200]byte
}

func (p *streamParm) capture() *captureParm { return (*captureParm)(unsafe.Pointer(&p.parm)) }

// ioctl issues one request on fd, retrying when a signal interrupts it.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
