package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/server/firmware"
)

// arm64Image is a minimal static arm64 ELF executable header followed by
// size bytes of payload.
func arm64Image(size int) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), 0, 0, 0, 0, 0, 0, 0, 0, 0})
	for _, v := range []any{uint16(elf.ET_EXEC), uint16(elf.EM_AARCH64), uint32(elf.EV_CURRENT), uint64(0x400000), uint64(0), uint64(0),
		uint32(0), uint16(64), uint16(56), uint16(0), uint16(64), uint16(0), uint16(0)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	b.Write(payload)
	return b.Bytes()
}

// uploadServer is a firmware repository at 1.0.0 behind a bearer token,
// as saint-server mounts it.
func uploadServer(t *testing.T) (*firmware.Repository, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	if _, err := firmware.Publish(dir, "../../fixtures/config/roles", arm64Image(10), firmware.Release{Version: "1.0.0", ReleaseDate: "2026-01-01", MinHardwareRev: "1.0"}); err != nil {
		t.Fatal(err)
	}
	repo, err := firmware.Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	upload := repo.UploadHandler(firmware.UploadOptions{})
	mux := http.NewServeMux()
	mux.Handle("/api/firmware", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		upload.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return repo, srv
}

func writeImage(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "saint-node-linux-arm64")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFirmwareUploadSendsTheImageWithProgress(t *testing.T) {
	repo, srv := uploadServer(t)
	image := arm64Image(3 << 20)
	var out, progress bytes.Buffer
	err := firmwareUpload([]string{writeImage(t, image), "--version", "1.1.0", "--server", srv.URL, "--token", "s3cret", "--changelog", "faster"}, "", &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	st := repo.Status()
	if !st.Available || st.Firmware.Version != "1.1.0" || st.Firmware.SizeBytes != int64(len(image)) || st.Firmware.Changelog != "faster" {
		t.Errorf("repository after upload: %+v", st.Firmware)
	}
	if !strings.Contains(out.String(), "uploaded firmware 1.1.0") || !strings.Contains(out.String(), "1.0.0 archived") {
		t.Errorf("output %q", out.String())
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "uploading:  10%") || !strings.HasPrefix(lines[9], "uploading: 100%") {
		t.Errorf("progress lines %q, want ten steps of 10%%", lines)
	}
}

func TestFirmwareUploadSmallImageShowsNoProgress(t *testing.T) {
	_, srv := uploadServer(t)
	var out, progress bytes.Buffer
	if err := firmwareUpload([]string{writeImage(t, arm64Image(1000)), "--version", "1.1.0", "--server", srv.URL, "--token", "s3cret"}, "", &out, &progress); err != nil {
		t.Fatal(err)
	}
	if progress.Len() != 0 {
		t.Errorf("progress for a 1 kB image: %q", progress.String())
	}
}

func TestFirmwareUploadReportsRefusals(t *testing.T) {
	repo, srv := uploadServer(t)
	img := writeImage(t, arm64Image(100))
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{img, "--version", "1.1.0", "--server", srv.URL, "--token", "wrong"}, "401"},
		{[]string{img, "--version", "0.9.0", "--server", srv.URL, "--token", "s3cret"}, "field version"},
		{[]string{img, "--version", "1.1.0", "--server", srv.URL, "--token", "s3cret", "--date", "soon"}, "field release_date"},
		{[]string{img, "--server", srv.URL}, "usage"},
		{[]string{img, "--version", "1.1.0", "--server", "ftp://x"}, "http://"},
	} {
		err := firmwareUpload(tc.args, "", &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("firmware upload %q: %v, want an error saying %q", tc.args, err, tc.says)
		}
	}
	if v := repo.Status().Firmware.Version; v != "1.0.0" {
		t.Errorf("a refused upload changed the repository to %s", v)
	}
}

func TestUploadURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://robot.local":         "http://robot.local/api/firmware",
		"robot.local:8000":           "http://robot.local:8000/api/firmware",
		"ws://10.0.0.2:9090":         "http://10.0.0.2:9090/api/firmware",
		"https://robot/api/firmware": "https://robot/api/firmware",
		"http://192.168.10.1/saint/": "http://192.168.10.1/saint/api/firmware",
	} {
		if got, err := uploadURL(in); err != nil || got != want {
			t.Errorf("uploadURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestFirmwareUploadTakesSaintctlsToken(t *testing.T) {
	repo, srv := uploadServer(t)
	tokenFile := filepath.Join(t.TempDir(), "api_token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run([]string{"--token-file", tokenFile, "firmware", "upload", writeImage(t, arm64Image(100)), "--version", "1.1.0", "--server", srv.URL}, &out)
	if err != nil || repo.Status().Firmware.Version != "1.1.0" {
		t.Errorf("saintctl --token-file F firmware upload: %v (repository at %s)", err, repo.Status().Firmware.Version)
	}
}
