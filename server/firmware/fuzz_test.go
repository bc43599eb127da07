package firmware

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// No upload makes the ELF check panic.
func FuzzCheckExecutable(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte("not an executable"))
	if exe, err := os.Executable(); err == nil {
		if b, err := os.ReadFile(exe); err == nil && len(b) > 4096 {
			f.Add(b[:4096]) // a real header, truncated
		}
	}
	f.Fuzz(func(t *testing.T, image []byte) {
		_ = CheckExecutable(image, elf.EM_AARCH64)
		_ = CheckExecutable(image, elf.EM_X86_64)
	})
}

// Whatever manifest.json holds, opening the repository never panics, and
// what it offers is the image on disk.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"firmware":{"version":"1.0.0","checksum_sha256":"` + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" + `","size_bytes":4}}`))
	f.Add([]byte(`{"firmware":{"version":"1.0.0","checksum_sha256":"x","signature":"AAAA","signing_key":"ed25519:AAAA"}}`))
	f.Add([]byte(`{"firmware":`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "current"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ImagePath), []byte("test"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestPath), manifest, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir, "")
		if err != nil {
			return
		}
		for _, require := range []bool{false, true} {
			if err := r.RequireSignatures(require); err != nil {
				return
			}
			resp := r.Check(msg.FirmwareCheckRequest{NodeID: "n", CurrentVersion: "0.0.0"})
			if resp.UpdateAvailable && !strings.EqualFold(resp.ChecksumSHA256, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08") {
				t.Fatalf("offered sha256 %s, not the image's", resp.ChecksumSHA256)
			}
		}
	})
}

// Whatever a client posts to POST /api/firmware — any fields, any content
// type, any body — the handler never panics, answers JSON with a 201, 4xx
// or 413, leaves nothing staged, and publishes only an image whose sha256
// is the one it reports.
func FuzzUpload(f *testing.F) {
	image := fakeELF(elf.EM_AARCH64, false, "fuzzed")
	f.Add("version=2.0.0&sha256="+sum(image), "application/octet-stream", image)
	body, ct := multipartSeed(map[string]string{"version": "2.0.1", "sha256": sum(image), "changelog": "x"}, image)
	f.Add("", ct, body)
	f.Add("version=../x&sha256=zz", "multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"image\"\r\n\r\nabc\r\n--x--\r\n"))
	f.Add("version=3.0.0", "text/plain", []byte("\x7fELF"))
	dir := f.TempDir()
	if _, err := Publish(dir, "", fakeELF(elf.EM_AARCH64, false, "v1"), Release{Version: "1.0.0", ReleaseDate: "2026-01-01"}); err != nil {
		f.Fatal(err)
	}
	r, err := Open(dir, "")
	if err != nil {
		f.Fatal(err)
	}
	h := r.UploadHandler(UploadOptions{MaxImageBytes: 64 << 10, Now: func() time.Time { return time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC) }})
	f.Fuzz(func(t *testing.T, query, contentType string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/firmware", bytes.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusCreated, http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("answered %d: %s", w.Code, w.Body)
		}
		var res UploadResult
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatalf("answer is not JSON: %v: %q", err, w.Body)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, UploadDir)); len(entries) != 0 {
			t.Fatalf("%d files left staged", len(entries))
		}
		if w.Code == http.StatusCreated {
			got, err := os.ReadFile(filepath.Join(dir, ImagePath))
			if err != nil || sum(got) != res.Firmware.ChecksumSHA256 {
				t.Fatalf("published %s, the image on disk hashes to %s (%v)", res.Firmware.ChecksumSHA256, sum(got), err)
			}
		}
	})
}

// multipartSeed is a multipart/form-data upload body and its content type.
func multipartSeed(fields map[string]string, image []byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("image", "saint-node")
	_, _ = fw.Write(image)
	_ = mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}
