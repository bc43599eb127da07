package firmware

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/bus/msg"
)

const roles = "../../fixtures/config/roles"

func publish(t *testing.T, image []byte, version string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := Publish(dir, roles, image, Release{Version: version, ReleaseDate: "2026-11-22", MinHardwareRev: "1.0", Changelog: "test"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPublishWritesTheFirmwareTree(t *testing.T) {
	dir := publish(t, []byte("image-v1"), "1.2.0")
	for _, p := range []string{"manifest.json", "current/saint_node.img", "current/saint_node.img.sha256",
		"current/changelog.md", "configs/head.yaml", "configs/arms_left.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	if !st.Available || st.Firmware.Version != "1.2.0" || st.Firmware.SizeBytes != 8 {
		t.Errorf("status = %+v", st)
	}
	if len(st.Roles) != 6 {
		t.Errorf("roles = %v, want 6 configurations", st.Roles)
	}
}

func TestCheck(t *testing.T) {
	r, err := Open(publish(t, []byte("image-v1"), "1.2.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		have  string
		hw    string
		force bool
		want  bool
	}{
		{"1.1.9", "1.0", false, true},
		{"1.2.0", "1.0", false, false},
		{"1.10.0", "1.0", false, false}, // never downgrade unasked
		{"1.2.0", "1.0", true, true},
		{"1.0.0", "0.9", false, false}, // hardware too old
		{"v1.1", "", false, true},
	} {
		got := r.Check(msg.FirmwareCheckRequest{CurrentVersion: tc.have, HardwareRev: tc.hw, Force: tc.force})
		if got.UpdateAvailable != tc.want {
			t.Errorf("Check(%s, hw %s, force %v) = %v (%s), want %v", tc.have, tc.hw, tc.force, got.UpdateAvailable, got.Message, tc.want)
		}
	}
}

func TestCorruptImageNotOffered(t *testing.T) {
	dir := publish(t, []byte("image-v1"), "1.2.0")
	if err := os.WriteFile(filepath.Join(dir, ImagePath), []byte("image-v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	got := r.Check(msg.FirmwareCheckRequest{CurrentVersion: "0.1.0", Force: true})
	if got.UpdateAvailable || !strings.Contains(got.Message, "sha256") {
		t.Errorf("corrupt image offered: %+v", got)
	}
	if d := r.Download(msg.FirmwareDownloadRequest{Version: "1.2.0"}); d.Success {
		t.Error("corrupt image downloadable")
	}
}

func TestDownloadChunks(t *testing.T) {
	image := bytes.Repeat([]byte("0123456789abcdef"), msg.FirmwareChunkSize/8) // two chunks
	r, err := Open(publish(t, image, "2.0.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < len(image) {
		resp := r.Download(msg.FirmwareDownloadRequest{Version: "2.0.0", Offset: int64(len(got))})
		if !resp.Success || len(resp.Data) == 0 {
			t.Fatalf("chunk at %d: %+v", len(got), resp.Message)
		}
		got = append(got, resp.Data...)
	}
	if !bytes.Equal(got, image) {
		t.Error("reassembled image differs")
	}
	if resp := r.Download(msg.FirmwareDownloadRequest{Version: "2.0.0", Offset: -1}); resp.Success || !strings.Contains(resp.Message, "offset") {
		t.Errorf("negative offset: %+v", resp.Message)
	}
	if resp := r.Download(msg.FirmwareDownloadRequest{Version: "9.9.9"}); resp.Success || !strings.Contains(resp.Message, "version") {
		t.Errorf("unknown version: %+v", resp.Message)
	}
}

func TestHTTPRangeResume(t *testing.T) {
	image := []byte("0123456789")
	r, err := Open(publish(t, image, "1.0.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/firmware/current/saint_node.img", nil)
	req.Header.Set("Range", "bytes=4-")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "456789" {
		t.Errorf("range request: %d %q", resp.StatusCode, body)
	}
	resp, err = http.Get(srv.URL + "/firmware/configs/arms_right.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "instance: right") {
		t.Errorf("config over HTTP: %d %q", resp.StatusCode, body)
	}
	resp, _ = http.Get(srv.URL + "/firmware/../../etc/passwd")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("path escape answered %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestOpenWithoutFirmware(t *testing.T) {
	r, err := Open(t.TempDir(), roles)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Check(msg.FirmwareCheckRequest{CurrentVersion: "0.1.0"}); got.UpdateAvailable || got.Message == "" {
		t.Errorf("check without firmware: %+v", got)
	}
	data, ver, sum, err := r.RoleConfig("arms", "left")
	if err != nil || ver == "" || len(sum) != 64 || !bytes.Contains(data, []byte("instance: left")) {
		t.Errorf("RoleConfig = %q %q %q %v", data, ver, sum, err)
	}
	if _, _, _, err := r.RoleConfig("wings", ""); err == nil || !strings.Contains(err.Error(), "wings") {
		t.Errorf("unknown role: %v", err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.2.0", "1.2.0", 0}, {"1.2", "1.2.0", 0}, {"1.9.0", "1.10.0", -1}, {"v2", "1.99", 1}, {"1.0.0-rc1", "1.0.0-rc2", -1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestOfferCarriesTheHTTPURL checks the offer names the image on the
// firmware HTTP server: with the listener's host, or none (the node's own
// view of the server's host) when it listens on every interface.
func TestOfferCarriesTheHTTPURL(t *testing.T) {
	r, err := Open(publish(t, []byte("image-v1"), "1.2.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Check(msg.FirmwareCheckRequest{CurrentVersion: "1.0.0"}).URL; got != "/firmware/current/saint_node.img" {
		t.Errorf("URL before the listener is known = %q", got)
	}
	for addr, want := range map[string]string{
		"192.168.10.1:8080": "http://192.168.10.1:8080/firmware/current/saint_node.img",
		"[::]:8080":         "http://:8080/firmware/current/saint_node.img",
		"0.0.0.0:9000":      "http://:9000/firmware/current/saint_node.img",
		"[fd00::1]:8080":    "http://[fd00::1]:8080/firmware/current/saint_node.img",
	} {
		r.SetHTTPAddr(addr)
		if got := r.Check(msg.FirmwareCheckRequest{CurrentVersion: "1.0.0"}).URL; got != want {
			t.Errorf("listening on %s: offer URL %q, want %q", addr, got, want)
		}
	}
}
