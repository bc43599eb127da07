package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/bus/natsbus/broker"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/firmware"
)

func image(n int, seed int64) ([]byte, string) {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

// serveImage serves img with range requests, as the server's firmware HTTP
// server does (http.ServeContent), recording each request's Range header.
type serveImage struct {
	img []byte
	// cutAfter > 0: the first response is cut after this many body bytes,
	// the connection closed mid-transfer.
	cutAfter int

	mu     sync.Mutex
	ranges []string
}

func (s *serveImage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	cut := s.cutAfter
	s.cutAfter = 0
	s.mu.Unlock()
	if cut > 0 {
		w.Header().Set("Content-Length", fmt.Sprint(len(s.img)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(s.img[:cut])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	http.ServeContent(w, r, "saint_node.img", time.Time{}, bytes.NewReader(s.img))
}

func (s *serveImage) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

func TestFetch(t *testing.T) {
	img, sum := image(3<<20+123, 1)
	srv := httptest.NewServer(&serveImage{img: img})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "download.part")
	c := &Client{}
	if err := c.Fetch(context.Background(), srv.URL+"/firmware/current/saint_node.img", path, int64(len(img)), sum); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("downloaded %d bytes (err %v), want the %d-byte image", len(got), err, len(img))
	}
}

// TestInterruptedDownloadResumes cuts the connection a third of the way
// through: the first Fetch fails keeping what arrived, the second asks for
// the rest with a Range request and ends with the whole, verified image.
func TestInterruptedDownloadResumes(t *testing.T) {
	img, sum := image(2<<20, 2)
	cut := len(img) / 3
	s := &serveImage{img: img, cutAfter: cut}
	srv := httptest.NewServer(s)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "download.part")
	c := &Client{}
	err := c.Fetch(context.Background(), srv.URL, path, int64(len(img)), sum)
	if err == nil {
		t.Fatal("a download cut midway succeeded")
	}
	st, statErr := os.Stat(path)
	if statErr != nil || st.Size() == 0 || st.Size() > int64(cut) {
		t.Fatalf("after the cut the part holds %v bytes (%v), want 1..%d: %v", st, statErr, cut, err)
	}
	kept := st.Size()
	if err := c.Fetch(context.Background(), srv.URL, path, int64(len(img)), sum); err != nil {
		t.Fatalf("resuming: %v", err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, img) {
		t.Fatal("resumed download differs from the image")
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[0] != "" || reqs[1] != fmt.Sprintf("bytes=%d-", kept) {
		t.Errorf("requests' Range headers = %q, want none then bytes=%d-", reqs, kept)
	}
}

// TestWrongHashRefused serves bytes that are not the published image: the
// download is refused with ErrChecksum and nothing is left to install.
func TestWrongHashRefused(t *testing.T) {
	img, _ := image(1<<20, 3)
	_, otherSum := image(1<<20, 4)
	srv := httptest.NewServer(&serveImage{img: img})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "download.part")
	err := (&Client{}).Fetch(context.Background(), srv.URL, path, int64(len(img)), otherSum)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("Fetch of the wrong bytes: %v, want ErrChecksum", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused download is still on disk (%v)", err)
	}
}

// TestServerIgnoringRangeStartsOver resumes against a server that answers
// a Range request with the whole image (200): the part is replaced, not
// appended to.
func TestServerIgnoringRangeStartsOver(t *testing.T) {
	img, sum := image(1<<20, 5)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(img)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "download.part")
	if err := os.WriteFile(path, img[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&Client{}).Fetch(context.Background(), srv.URL, path, int64(len(img)), sum); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, img) {
		t.Fatalf("got %d bytes, want the %d-byte image", len(got), len(img))
	}
}

func TestShortAndLongImagesRefused(t *testing.T) {
	img, sum := image(100_000, 6)
	for name, body := range map[string][]byte{"short": img[:50_000], "long": append(append([]byte(nil), img...), 1, 2, 3)} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
		path := filepath.Join(t.TempDir(), "download.part")
		err := (&Client{}).Fetch(context.Background(), srv.URL, path, int64(len(img)), sum)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("%s image: %v, want an error about its size", name, err)
		}
		// Short is an interruption (resume later); long is not the image.
		if errors.Is(err, ErrChecksum) != (name == "long") {
			t.Errorf("%s image: %v: ErrChecksum = %v", name, err, errors.Is(err, ErrChecksum))
		}
	}
}

// TestSixNodesAtOnce downloads one image into six files concurrently from
// the server's own firmware handler, as six nodes updating together do.
func TestSixNodesAtOnce(t *testing.T) {
	dir := t.TempDir()
	img, sum := image(4<<20, 7)
	if _, err := firmware.Publish(dir, "", img, firmware.Release{Version: "2.0.0", ReleaseDate: "2026-11-24"}); err != nil {
		t.Fatal(err)
	}
	repo, err := firmware.Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(repo.Handler())
	defer srv.Close()
	offer := repo.Check(firmwareCheck("1.0.0"))
	if offer.SizeBytes != int64(len(img)) || offer.ChecksumSHA256 != sum {
		t.Fatalf("offer %+v does not describe the published image", offer)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &Client{}
			path := filepath.Join(dir, fmt.Sprintf("node%d.part", i))
			if errs[i] = c.Fetch(context.Background(), "http://"+host+offer.URL, path, offer.SizeBytes, offer.ChecksumSHA256); errs[i] == nil {
				got, _ := os.ReadFile(path)
				if !bytes.Equal(got, img) {
					errs[i] = errors.New("file differs from the image")
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
}

func TestResolve(t *testing.T) {
	c := &Client{Host: "192.168.10.1"}
	for in, want := range map[string]string{
		"http://10.0.0.2:8080/firmware/current/saint_node.img": "http://10.0.0.2:8080/firmware/current/saint_node.img",
		"http://:8080/firmware/current/saint_node.img":         "http://192.168.10.1:8080/firmware/current/saint_node.img",
		"/firmware/current/saint_node.img":                     "http://192.168.10.1/firmware/current/saint_node.img",
	} {
		if got, err := c.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := (&Client{}).Resolve("/firmware/x"); err == nil {
		t.Error("a URL with no host resolved with no host configured")
	}
	if _, err := c.Resolve("ftp://h/x"); err == nil {
		t.Error("an ftp URL was accepted")
	}
}

// BenchmarkDownload downloads a 9 MB image from the server's firmware
// handler with Fetch (sha256 on the way, one fsync) and, in the same run,
// with the plainest client from a net/http FileServer serving the same
// file (io.Copy into a file with sha256, one fsync): the anchor.
//
//	go test -run '^$' -bench Download -benchtime 20x -count 5 ./node/fetch/
func BenchmarkDownload(b *testing.B) {
	dir := b.TempDir()
	img, sum := image(9_100_000, 8)
	if _, err := firmware.Publish(dir, "", img, firmware.Release{Version: "2.0.0", ReleaseDate: "2026-11-24"}); err != nil {
		b.Fatal(err)
	}
	repo, err := firmware.Open(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	fw := httptest.NewServer(repo.Handler())
	defer fw.Close()
	fs := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer fs.Close()
	offer := repo.Check(firmwareCheck("1.0.0"))
	out := filepath.Join(b.TempDir(), "download.part")

	b.Run("fileserver", func(b *testing.B) {
		b.SetBytes(int64(len(img)))
		for i := 0; i < b.N; i++ {
			_ = os.Remove(out)
			resp, err := http.Get(fs.URL + "/" + firmware.ImagePath)
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(out)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			if _, err := io.Copy(io.MultiWriter(f, h), resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
			if hex.EncodeToString(h.Sum(nil)) != sum {
				b.Fatal("wrong sum")
			}
		}
	})
	b.Run("fetch", func(b *testing.B) {
		b.SetBytes(int64(len(img)))
		c := &Client{Host: "127.0.0.1"}
		url := "http://" + strings.TrimPrefix(fw.URL, "http://") + offer.URL
		for i := 0; i < b.N; i++ {
			_ = os.Remove(out)
			if err := c.Fetch(context.Background(), url, out, offer.SizeBytes, offer.ChecksumSHA256); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bus-chunks", func(b *testing.B) {
		// The download as it was before HTTP: 256 KiB chunks as
		// request/replies over NATS (base64 in JSON), each chunk appended
		// and synced, the sha256 over the whole at the end.
		ns, err := broker.Start(&broker.Options{Port: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer ns.Shutdown()
		srvBus, err := natsbus.Connect(ns.ClientURL(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer srvBus.Close()
		cli, err := natsbus.Connect(ns.ClientURL(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cli.Close()
		ex := executor.New(nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = ex.Run(ctx) }()
		if _, err := bus.ServeJSON(srvBus, msg.ServiceFirmwareDownload, ex, func(req msg.FirmwareDownloadRequest, reply func(msg.FirmwareDownloadResponse, error)) {
			reply(repo.Download(req), nil)
		}); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(img)))
		for i := 0; i < b.N; i++ {
			f, err := os.Create(out)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			for off := int64(0); off < offer.SizeBytes; {
				var resp msg.FirmwareDownloadResponse
				if err := cli.Call(ctx, msg.ServiceFirmwareDownload, msg.FirmwareDownloadRequest{NodeID: "n", Version: offer.Version, Offset: off}, &resp); err != nil || !resp.Success {
					b.Fatal(err, resp.Message)
				}
				if _, err := f.Write(resp.Data); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				h.Write(resp.Data)
				off += int64(len(resp.Data))
			}
			f.Close()
			if hex.EncodeToString(h.Sum(nil)) != sum {
				b.Fatal("wrong sum")
			}
		}
	})
	b.Run("fetch-6-nodes", func(b *testing.B) {
		b.SetBytes(6 * int64(len(img)))
		c := &Client{}
		url := "http://" + strings.TrimPrefix(fw.URL, "http://") + offer.URL
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			for n := 0; n < 6; n++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := fmt.Sprintf("%s.%d", out, n)
					_ = os.Remove(p)
					if err := c.Fetch(context.Background(), url, p, offer.SizeBytes, offer.ChecksumSHA256); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
		}
	})
}

func firmwareCheck(version string) msg.FirmwareCheckRequest {
	return msg.FirmwareCheckRequest{NodeID: "node-1", CurrentVersion: version}
}

// TestStalledServerGivesUp serves half the image and then goes silent
// without closing the connection: the watchdog ends the download, keeping
// the half for the next attempt.
func TestStalledServerGivesUp(t *testing.T) {
	img, sum := image(1<<20, 9)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(img)))
		_, _ = w.Write(img[:len(img)/2])
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	path := filepath.Join(t.TempDir(), "download.part")
	err := (&Client{Stall: 200 * time.Millisecond}).Fetch(context.Background(), srv.URL, path, int64(len(img)), sum)
	if err == nil || !strings.Contains(err.Error(), "nothing received") {
		t.Fatalf("stalled download: %v, want the watchdog's error", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("nothing kept of the stalled download (%v)", err)
	}
}
