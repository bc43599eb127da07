//go:build linux

package v4l2

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

const is64 = unsafe.Sizeof(uintptr(0)) == 8

// pick returns the 64-bit or the 32-bit value.
func pick(v64, v32 uintptr) uintptr {
	if is64 {
		return v64
	}
	return v32
}

// The request numbers as the kernel's videodev2.h macros expand on 64-bit
// and 32-bit Linux.
func TestRequestNumbers(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"VIDIOC_QUERYCAP", vidiocQueryCap, 0x80685600},
		{"VIDIOC_S_FMT", vidiocSFmt, pick(0xc0d05605, 0xc0cc5605)},
		{"VIDIOC_REQBUFS", vidiocReqBufs, 0xc0145608},
		{"VIDIOC_QUERYBUF", vidiocQueryBuf, pick(0xc0585609, 0xc0445609)},
		{"VIDIOC_QBUF", vidiocQBuf, pick(0xc058560f, 0xc044560f)},
		{"VIDIOC_DQBUF", vidiocDQBuf, pick(0xc0585611, 0xc0445611)},
		{"VIDIOC_STREAMON", vidiocStreamOn, 0x40045612},
		{"VIDIOC_STREAMOFF", vidiocStreamOff, 0x40045613},
		{"VIDIOC_S_PARM", vidiocSParm, 0xc0cc5616},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
}

// Every field where videodev2.h puts it.
func TestStructLayouts(t *testing.T) {
	var c capability
	var p pixFormat
	var f format
	var r requestBuffers
	var b buffer
	var sp streamParm
	var cp captureParm
	for _, tc := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"sizeof v4l2_capability", unsafe.Sizeof(c), 104},
		{"v4l2_capability.card", unsafe.Offsetof(c.card), 16},
		{"v4l2_capability.bus_info", unsafe.Offsetof(c.busInfo), 48},
		{"v4l2_capability.version", unsafe.Offsetof(c.version), 80},
		{"v4l2_capability.capabilities", unsafe.Offsetof(c.capabilities), 84},
		{"v4l2_capability.device_caps", unsafe.Offsetof(c.deviceCaps), 88},
		{"sizeof v4l2_pix_format", unsafe.Sizeof(p), 48},
		{"v4l2_pix_format.bytesperline", unsafe.Offsetof(p.bytesperline), 16},
		{"v4l2_pix_format.xfer_func", unsafe.Offsetof(p.xferFunc), 44},
		{"sizeof v4l2_format", unsafe.Sizeof(f), pick(208, 204)},
		{"v4l2_format.fmt", unsafe.Offsetof(f.fmt), pick(8, 4)},
		{"sizeof v4l2_requestbuffers", unsafe.Sizeof(r), 20},
		{"v4l2_requestbuffers.flags", unsafe.Offsetof(r.flags), 16},
		{"sizeof v4l2_timecode", unsafe.Sizeof(timecode{}), 16},
		{"sizeof v4l2_buffer", unsafe.Sizeof(b), pick(88, 68)},
		{"v4l2_buffer.field", unsafe.Offsetof(b.field), 16},
		{"v4l2_buffer.timestamp", unsafe.Offsetof(b.timestamp), pick(24, 20)},
		{"v4l2_buffer.timecode", unsafe.Offsetof(b.timecode), pick(40, 28)},
		{"v4l2_buffer.sequence", unsafe.Offsetof(b.sequence), pick(56, 44)},
		{"v4l2_buffer.memory", unsafe.Offsetof(b.memory), pick(60, 48)},
		{"v4l2_buffer.m", unsafe.Offsetof(b.m), pick(64, 52)},
		{"v4l2_buffer.length", unsafe.Offsetof(b.length), pick(72, 56)},
		{"v4l2_buffer.request_fd", unsafe.Offsetof(b.requestFD), pick(80, 64)},
		{"sizeof v4l2_streamparm", unsafe.Sizeof(sp), 204},
		{"sizeof v4l2_captureparm", unsafe.Sizeof(cp), 40},
		{"v4l2_captureparm.timeperframe", unsafe.Offsetof(cp.timeperframe), 8},
		{"v4l2_captureparm.readbuffers", unsafe.Offsetof(cp.readbuffers), 20},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// The bytes the kernel reads for a format request and a dequeued buffer,
// written field by field with encoding/binary at the header's offsets,
// equal the Go structs' memory.
func TestStructBytesMatchTheirEncoding(t *testing.T) {
	if !littleEndian() {
		t.Skip("reference encodings are little-endian")
	}
	le := binary.LittleEndian

	f := format{typ: bufTypeVideoCapture}
	p := f.pix()
	p.width, p.height, p.pixelformat, p.field, p.bytesperline = 640, 480, PixelFormatYUYV, fieldNone, 1280
	want := make([]byte, unsafe.Sizeof(f))
	le.PutUint32(want[0:], 1)
	u := int(pick(8, 4))
	for i, v := range []uint32{640, 480, 0x56595559, 1, 1280} {
		le.PutUint32(want[u+4*i:], v)
	}
	if got := unsafe.Slice((*byte)(unsafe.Pointer(&f)), unsafe.Sizeof(f)); string(got) != string(want) {
		t.Errorf("v4l2_format bytes\n got % x\nwant % x", got[:u+24], want[:u+24])
	}

	b := buffer{index: 3, typ: 1, bytesused: 614400, flags: 0x2001, field: 1, sequence: 77, memory: memoryMMap, length: 614400}
	b.timestamp.Sec, b.timestamp.Usec = 1234, 567
	*(*uint32)(unsafe.Pointer(&b.m)) = 0x40000
	want = make([]byte, unsafe.Sizeof(b))
	for i, v := range []uint32{3, 1, 614400, 0x2001, 1} {
		le.PutUint32(want[4*i:], v)
	}
	ts := int(pick(24, 20))
	if is64 {
		le.PutUint64(want[ts:], 1234)
		le.PutUint64(want[ts+8:], 567)
	} else {
		le.PutUint32(want[ts:], 1234)
		le.PutUint32(want[ts+4:], 567)
	}
	le.PutUint32(want[pick(56, 44):], 77)
	le.PutUint32(want[pick(60, 48):], memoryMMap)
	le.PutUint32(want[pick(64, 52):], 0x40000)
	le.PutUint32(want[pick(72, 56):], 614400)
	if got := unsafe.Slice((*byte)(unsafe.Pointer(&b)), unsafe.Sizeof(b)); string(got) != string(want) {
		t.Errorf("v4l2_buffer bytes\n got % x\nwant % x", got, want)
	}
	if b.offset() != 0x40000 {
		t.Errorf("offset %#x", b.offset())
	}
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func TestFourCC(t *testing.T) {
	// V4L2_PIX_FMT_YUYV and V4L2_PIX_FMT_MJPEG in videodev2.h.
	if PixelFormatYUYV != 0x56595559 || PixelFormatMJPEG != 0x47504a4d {
		t.Errorf("YUYV %#x MJPG %#x", PixelFormatYUYV, PixelFormatMJPEG)
	}
	if s := fourccString(PixelFormatMJPEG); s != "MJPG" {
		t.Errorf("fourccString = %q", s)
	}
}
