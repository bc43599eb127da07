package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/jpeg"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/camera"
)

// redFrame is a 800×600 rgb8 picture, red on the left half and blue on
// the right.
func redFrame(seq uint32) msg.Image {
	const w, h = 800, 600
	data := make([]byte, 3*w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := 3 * (y*w + x)
			if x < w/2 {
				data[i] = 250
			} else {
				data[i+2] = 250
			}
		}
	}
	return msg.Image{Header: msg.Header{Stamp: msg.Time{Sec: int32(1_800_000_000), Nanosec: seq}, FrameID: "head_camera"},
		Width: w, Height: h, Step: 3 * w, Encoding: msg.ImageRGB8, Data: data}
}

// Frames leave the robot: the head camera's frames become JPEGs on the
// "camera" WebSocket topic and an authenticated MJPEG stream, whether they
// are published in the server's process (values) or arrive as JSON, as
// from a node over the wire.
func TestCameraStreams(t *testing.T) {
	t.Run("value", func(t *testing.T) { testCameraStreams(t, false) })
	t.Run("json", func(t *testing.T) { testCameraStreams(t, true) })
}

func testCameraStreams(t *testing.T, asJSON bool) {
	r, b := apiRobot(t, nil, nil)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := uint32(0); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var frame any = redFrame(i)
			if asJSON {
				data, err := json.Marshal(frame)
				if err != nil {
					panic(err)
				}
				frame = json.RawMessage(data)
			}
			_ = b.Publish(msg.TopicHeadCameraImageRaw, frame)
		}
	}()
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	if m := c.sendRaw("s", `{"id":"s","type":"subscribe","topics":["camera"],"rate_hz":5}`); m["status"] != "ok" {
		t.Fatalf("subscribe camera: %v", m)
	}
	m := c.state(camera.Topic, func(d map[string]any) bool { return d["jpeg"] != nil })
	d := m["data"].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(d["jpeg"].(string))
	if err != nil {
		t.Fatal(err)
	}
	checkPicture(t, "camera topic", raw, camera.MaxWidth, 480)
	if d["width"] != float64(camera.MaxWidth) || d["camera"] != "head" {
		t.Errorf("camera topic %v", d)
	}

	url := "http://" + r.srv.Addrs()["http"] + "/api/camera/head"
	if resp, err := http.Get(url); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %v %v, want 401", resp, err)
	}
	get := func(query string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, url+query, nil)
		req.Header.Set("Authorization", "Bearer "+r.srv.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := get("?fps=0"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("fps=0: %s, want 400", resp.Status)
	}
	resp := get("?width=320&fps=10")
	defer resp.Body.Close()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/x-mixed-replace" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	parts := multipart.NewReader(resp.Body, params["boundary"])
	for i := 0; i < 3; i++ {
		p, err := parts.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if p.Header.Get("Content-Type") != "image/jpeg" {
			t.Errorf("part %d is %q", i, p.Header.Get("Content-Type"))
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		checkPicture(t, "MJPEG part", bytes.TrimSuffix(data, []byte("\r\n")), 320, 240)
	}
}

// checkPicture decodes a JPEG of w×h: red left, blue right.
func checkPicture(t *testing.T, what string, data []byte, w, h int) {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s is %dx%d, want %dx%d", what, b.Dx(), b.Dy(), w, h)
	}
	lr, _, lb, _ := img.At(w/4, h/2).RGBA()
	rr, _, rb, _ := img.At(3*w/4, h/2).RGBA()
	if lr>>8 < 200 || lb>>8 > 50 || rb>>8 < 200 || rr>>8 > 50 {
		t.Errorf("%s: left %d/%d, right %d/%d (red/blue), want red then blue", what, lr>>8, lb>>8, rr>>8, rb>>8)
	}
}
