package firmware

import (
	"bytes"
	"crypto/ed25519"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/fwsign"
)

func asFieldError(err error, fe **FieldError) bool { return errors.As(err, fe) }

// fakeELF builds a minimal 64-bit little-endian ELF executable for machine,
// with a PT_INTERP program header when dynamic, followed by payload.
func fakeELF(machine elf.Machine, dynamic bool, payload string) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	phnum := uint16(0)
	if dynamic {
		phnum = 1
	}
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), 0})
	b.Write(make([]byte, 8))
	for _, v := range []any{
		uint16(elf.ET_EXEC), uint16(machine), uint32(elf.EV_CURRENT),
		uint64(0x400000), // entry
		uint64(64),       // phoff
		uint64(0),        // shoff
		uint32(0),        // flags
		uint16(64), uint16(56), phnum, uint16(64), uint16(0), uint16(0),
	} {
		_ = binary.Write(&b, le, v)
	}
	if dynamic {
		interp := "/lib/ld-linux-aarch64.so.1\x00"
		for _, v := range []any{
			uint32(elf.PT_INTERP), uint32(elf.PF_R), uint64(64 + 56), uint64(0), uint64(0),
			uint64(len(interp)), uint64(len(interp)), uint64(1),
		} {
			_ = binary.Write(&b, le, v)
		}
		b.WriteString(interp)
	}
	b.WriteString(payload)
	return b.Bytes()
}

func uploadRig(t *testing.T) (*Repository, *httptest.Server) {
	t.Helper()
	return uploadRigWith(t, func(h http.Handler) http.Handler { return h })
}

// uploadRigWith is uploadRig with the upload handler wrapped.
func uploadRigWith(t *testing.T, wrap func(http.Handler) http.Handler) (*Repository, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	if _, err := Publish(dir, roles, fakeELF(elf.EM_AARCH64, false, "v1"), Release{Version: "1.0.0", ReleaseDate: "2026-01-01", MinHardwareRev: "1.0", Changelog: "first"}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(wrap(r.UploadHandler(UploadOptions{MaxImageBytes: 1 << 20, Now: func() time.Time { return day }})))
	t.Cleanup(srv.Close)
	return r, srv
}

func multipartBody(t *testing.T, fields map[string]string, image []byte) (*bytes.Buffer, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if image != nil {
		fw, err := mw.CreateFormFile("image", "saint-node")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(image)
	}
	mw.Close()
	return &body, mw.FormDataContentType()
}

func post(t *testing.T, url, contentType string, body *bytes.Buffer) (int, UploadResult, UploadError) {
	t.Helper()
	resp, err := http.Post(url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	var ok UploadResult
	var bad UploadError
	_ = json.Unmarshal(raw, &ok)
	_ = json.Unmarshal(raw, &bad)
	return resp.StatusCode, ok, bad
}

func TestUploadMultipartPublishesAndArchives(t *testing.T) {
	r, srv := uploadRig(t)
	image := fakeELF(elf.EM_AARCH64, false, "version two")
	body, ct := multipartBody(t, map[string]string{"version": "1.1.0", "sha256": sum(image), "changelog": "faster servos"}, image)
	code, res, bad := post(t, srv.URL, ct, body)
	if code != http.StatusCreated || res.Status != "ok" {
		t.Fatalf("upload: %d %+v %+v", code, res, bad)
	}
	if res.Firmware.Version != "1.1.0" || res.Firmware.ChecksumSHA256 != sum(image) || res.Firmware.ReleaseDate != "2026-11-22" ||
		res.Firmware.MinHardwareRev != "1.0" || res.Archived != "1.0.0" {
		t.Errorf("result %+v", res)
	}
	if st := r.Status(); !st.Available || st.Firmware.Version != "1.1.0" {
		t.Errorf("repository not reloaded: %+v", st.Firmware)
	}
	got, _ := os.ReadFile(filepath.Join(r.dir, ImagePath))
	if !bytes.Equal(got, image) {
		t.Error("current image is not the uploaded one")
	}
	if _, err := os.Stat(filepath.Join(r.dir, "archive", "v1.0.0", "saint_node.img")); err != nil {
		t.Errorf("previous image not archived: %v", err)
	}
}

func TestUploadRawBodyWithQueryFields(t *testing.T) {
	r, srv := uploadRig(t)
	image := fakeELF(elf.EM_AARCH64, false, "raw")
	q := url.Values{"version": {"2.0.0"}, "sha256": {strings.ToUpper(sum(image))}, "release_date": {"2026-12-01"}, "min_hardware_rev": {"1.1"}}
	code, res, bad := post(t, srv.URL+"?"+q.Encode(), "application/octet-stream", bytes.NewBuffer(image))
	if code != http.StatusCreated {
		t.Fatalf("raw upload: %d %+v", code, bad)
	}
	if res.Firmware.ReleaseDate != "2026-12-01" || res.Firmware.MinHardwareRev != "1.1" || r.Status().Firmware.Version != "2.0.0" {
		t.Errorf("raw upload result %+v", res.Firmware)
	}
}

func TestUploadRefusalsNameTheField(t *testing.T) {
	good := fakeELF(elf.EM_AARCH64, false, "ok")
	for _, tc := range []struct {
		name   string
		fields map[string]string
		image  []byte
		code   int
		field  string
		says   string
	}{
		{"no version", map[string]string{"sha256": sum(good)}, good, 400, "version", "missing"},
		{"bad version", map[string]string{"version": "../x", "sha256": sum(good)}, good, 400, "version", "not a version"},
		{"older version", map[string]string{"version": "0.9.0", "sha256": sum(good)}, good, 409, "version", "not newer"},
		{"same version", map[string]string{"version": "1.0.0", "sha256": sum(good)}, good, 409, "version", "not newer"},
		{"no sha256", map[string]string{"version": "1.1.0"}, good, 400, "sha256", "missing"},
		{"short sha256", map[string]string{"version": "1.1.0", "sha256": "abc"}, good, 400, "sha256", "64 hex"},
		{"wrong sha256", map[string]string{"version": "1.1.0", "sha256": sum([]byte("other"))}, good, 400, "sha256", "hashes to " + sum(good)},
		{"no image", map[string]string{"version": "1.1.0", "sha256": sum(good)}, nil, 400, "image", "missing"},
		{"not ELF", map[string]string{"version": "1.1.0", "sha256": sum([]byte("#!/bin/sh\n"))}, []byte("#!/bin/sh\n"), 400, "image", "not an ELF"},
		{"amd64", map[string]string{"version": "1.1.0", "sha256": sum(fakeELF(elf.EM_X86_64, false, "x"))}, fakeELF(elf.EM_X86_64, false, "x"), 400, "image", "GOARCH=arm64"},
		{"dynamic", map[string]string{"version": "1.1.0", "sha256": sum(fakeELF(elf.EM_AARCH64, true, "d"))}, fakeELF(elf.EM_AARCH64, true, "d"), 400, "image", "CGO_ENABLED=0"},
		{"bad date", map[string]string{"version": "1.1.0", "sha256": sum(good), "release_date": "tomorrow"}, good, 400, "release_date", "YYYY-MM-DD"},
		{"too big", map[string]string{"version": "1.1.0", "sha256": sum(good)}, append(append([]byte{}, good...), make([]byte, 1<<20)...), 413, "image", "larger than the 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, srv := uploadRig(t)
			body, ct := multipartBody(t, tc.fields, tc.image)
			code, _, bad := post(t, srv.URL, ct, body)
			if code != tc.code || bad.Status != "error" || bad.Field != tc.field || !strings.Contains(bad.Message, tc.says) {
				t.Errorf("got %d field %q message %q; want %d field %q saying %q", code, bad.Field, bad.Message, tc.code, tc.field, tc.says)
			}
			if st := r.Status(); st.Firmware.Version != "1.0.0" || !st.Available {
				t.Errorf("refused upload changed the repository: %+v", st.Firmware)
			}
			if entries, err := os.ReadDir(filepath.Join(r.dir, "archive")); err != nil || len(entries) != 0 {
				t.Errorf("refused upload archived the current image: %v (%v)", entries, err)
			}
			checkNothingStaged(t, r)
		})
	}
}

func TestUploadTakesOnlyPost(t *testing.T) {
	_, srv := uploadRig(t)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestCheckExecutableAcceptsARealGoBinary(t *testing.T) {
	// The test binary itself is an ELF for the machine running the test.
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Skipf("test binary is not ELF: %v", err)
	}
	dynamic := false
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	err = CheckExecutable(data, f.Machine)
	if dynamic != (err != nil) {
		t.Errorf("CheckExecutable(test binary, %v) = %v; binary dynamic: %v", f.Machine, err, dynamic)
	}
}

// checkNothingStaged fails t if an upload left a file in UploadDir.
func checkNothingStaged(t *testing.T, r *Repository) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(r.dir, UploadDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("upload left %s in %s", e.Name(), UploadDir)
	}
}

// stagedBytes is the size of the one file being staged, or -1.
func stagedBytes(r *Repository) int64 {
	entries, _ := os.ReadDir(filepath.Join(r.dir, UploadDir))
	if len(entries) != 1 {
		return -1
	}
	info, err := entries[0].Info()
	if err != nil {
		return -1
	}
	return info.Size()
}

// TestUploadStreamsToDisk: the image reaches the disk while it is still
// arriving — half of it is in the staged file before the uploader has
// sent the rest — and the staged file becomes the current image.
func TestUploadStreamsToDisk(t *testing.T) {
	r, srv := uploadRig(t)
	image := fakeELF(elf.EM_AARCH64, false, strings.Repeat("streamed", 80<<10)) // 640 KiB
	half := len(image) / 2
	pr, pw := io.Pipe()
	type answer struct {
		code int
		bad  UploadError
	}
	done := make(chan answer, 1)
	go func() {
		q := url.Values{"version": {"1.1.0"}, "sha256": {sum(image)}}
		resp, err := http.Post(srv.URL+"?"+q.Encode(), "application/octet-stream", pr)
		if err != nil {
			done <- answer{code: -1, bad: UploadError{Message: err.Error()}}
			return
		}
		defer resp.Body.Close()
		var bad UploadError
		_ = json.NewDecoder(resp.Body).Decode(&bad)
		done <- answer{resp.StatusCode, bad}
	}()
	if _, err := pw.Write(image[:half]); err != nil {
		t.Fatal(err)
	}
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := stagedBytes(r); n < int64(half) {
			return fmt.Errorf("after %d bytes sent, %d are staged on disk: the upload is not streamed", half, n)
		}
		return nil
	})
	if _, err := pw.Write(image[half:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if a := <-done; a.code != http.StatusCreated {
		t.Fatalf("upload: %d %+v", a.code, a.bad)
	}
	got, _ := os.ReadFile(filepath.Join(r.dir, ImagePath))
	if !bytes.Equal(got, image) {
		t.Error("current image is not the uploaded one")
	}
	if info, err := os.Stat(filepath.Join(r.dir, ImagePath)); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("current image: %v %v", info, err)
	}
	checkNothingStaged(t, r)
}

// TestUploadOversizeRaw: a raw body past MaxImageBytes is refused with
// 413 naming the limit, and nothing of it stays on disk.
func TestUploadOversizeRaw(t *testing.T) {
	r, srv := uploadRig(t)
	image := fakeELF(elf.EM_AARCH64, false, strings.Repeat("x", 1<<20))
	q := url.Values{"version": {"1.1.0"}, "sha256": {sum(image)}}
	code, _, bad := post(t, srv.URL+"?"+q.Encode(), "application/octet-stream", bytes.NewBuffer(image))
	if code != http.StatusRequestEntityTooLarge || bad.Field != "image" || !strings.Contains(bad.Message, "larger than the 1048576 bytes") {
		t.Errorf("oversize upload: %d %+v", code, bad)
	}
	if st := r.Status(); st.Firmware.Version != "1.0.0" {
		t.Errorf("oversize upload changed the repository: %+v", st.Firmware)
	}
	checkNothingStaged(t, r)
}

// TestUploadAbortedLeavesNoFile: an uploader that disconnects in the
// middle of the image leaves the repository as it was and no partial
// file behind.
func TestUploadAbortedLeavesNoFile(t *testing.T) {
	ended := make(chan struct{})
	r, srv := uploadRigWith(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			defer close(ended)
			h.ServeHTTP(w, req)
		})
	})
	image := fakeELF(elf.EM_AARCH64, false, strings.Repeat("partial", 64<<10))
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"version": {"1.1.0"}, "sha256": {sum(image)}}
	fmt.Fprintf(c, "POST /?%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", q.Encode(), len(image))
	if _, err := c.Write(image[:len(image)/3]); err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not end after the uploader went away")
	}
	if st := r.Status(); st.Firmware.Version != "1.0.0" || !st.Available {
		t.Errorf("aborted upload changed the repository: %+v", st.Firmware)
	}
	checkNothingStaged(t, r)
}

// TestUploadHandlerClearsStaleStaging: a file a stopped server left in
// UploadDir is removed when the handler is made.
func TestUploadHandlerClearsStaleStaging(t *testing.T) {
	r, _ := uploadRig(t)
	stale := filepath.Join(r.dir, UploadDir, "image-123")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("half an image"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.UploadHandler(UploadOptions{})
	checkNothingStaged(t, r)
}

// An upload older than the current release is published only with the
// release key's downgrade permission for its version: without one it is a
// conflict (409), with one for another version a field error (400).
func TestUploadOlderNeedsTheDowngradePermission(t *testing.T) {
	r, srv := uploadRig(t)
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	image := fakeELF(elf.EM_AARCH64, false, "the older release")
	signed := func(version, downgrade string) map[string]string {
		return map[string]string{
			"version": version, "sha256": sum(image),
			"signing_key":         fwsign.EncodePublic(priv.Public().(ed25519.PublicKey)),
			"signature":           fwsign.Sign(priv, version, sum(image), int64(len(image))),
			"downgrade_signature": downgrade,
		}
	}
	for _, c := range []struct {
		name   string
		fields map[string]string
		code   int
		field  string
	}{
		{"no permission", signed("0.9.0", ""), 409, "version"},
		{"a permission for another version", signed("0.9.0", fwsign.SignDowngrade(priv, "0.8.0")), 400, "downgrade_signature"},
	} {
		body, ct := multipartBody(t, c.fields, image)
		if code, _, bad := post(t, srv.URL, ct, body); code != c.code || bad.Field != c.field {
			t.Errorf("%s: %d on %q (%s), want %d on %q", c.name, code, bad.Field, bad.Message, c.code, c.field)
		}
		if v := r.Status().Firmware.Version; v != "1.0.0" {
			t.Fatalf("%s: the repository publishes %s", c.name, v)
		}
	}
	body, ct := multipartBody(t, signed("0.9.0", fwsign.SignDowngrade(priv, "0.9.0")), image)
	if code, res, bad := post(t, srv.URL, ct, body); code != http.StatusCreated || res.Firmware.DowngradeSignature == "" {
		t.Fatalf("with the permission: %d %+v %+v", code, res, bad)
	}
	if st := r.Status(); st.Firmware.Version != "0.9.0" || !st.Available {
		t.Errorf("with the permission: publishing %+v", st)
	}
}
