package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrChecksum is returned when the downloaded image is not the one
// published: its sha256 differs, or it is longer than published. The file
// is removed, so the next attempt starts over.
var ErrChecksum = errors.New("fetch: sha256 does not match")

// bufSize is the copy buffer: large enough that a 9 MB image takes a few
// dozen writes, small enough for a node's memory.
const bufSize = 1 << 20

// Client downloads images. The zero value uses http.DefaultClient and
// needs absolute URLs.
type Client struct {
	// HTTP is the client to use; nil means http.DefaultClient. It should
	// have no overall Timeout (a slow link may take minutes): cancel the
	// context instead.
	HTTP *http.Client
	// Host is the server's host as the node knows it (from its bus URL).
	// It fills in a URL that names no host ("http://:8080/firmware/…" or
	// "/firmware/…"), which is what a server listening on every interface
	// offers.
	Host string
	// Stall ends a download that has received nothing for this long (the
	// server or the link died without closing the connection); 0 means
	// DefaultStall. What arrived is kept for the next attempt.
	Stall time.Duration
}

// DefaultStall is Client.Stall's default.
const DefaultStall = 30 * time.Second

// Resolve returns the absolute URL to fetch for an offered one.
func (c *Client) Resolve(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("fetch: url %q: %w", raw, err)
	}
	if u.Scheme == "" {
		u.Scheme = "http"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("fetch: url %q: want http or https", raw)
	}
	if u.Hostname() == "" {
		if c.Host == "" {
			return "", fmt.Errorf("fetch: url %q names no host and none is configured", raw)
		}
		u.Host = net.JoinHostPort(c.Host, u.Port())
		if u.Port() == "" {
			u.Host = c.Host
		}
	}
	return u.String(), nil
}

// Fetch downloads rawURL into the file at path until the file holds size
// bytes whose sha256 is sum (hex). A file already at path is taken as the
// start of the image and continued with a Range request. On success the
// file is synced to disk; on ErrChecksum it is removed; on any other error
// (the connection dropped, the server is away) what arrived is kept for the
// next call to continue.
func (c *Client) Fetch(ctx context.Context, rawURL, path string, size int64, sum string) error {
	u, err := c.Resolve(rawURL)
	if err != nil {
		return err
	}
	want, err := hex.DecodeString(sum)
	if err != nil || len(want) != sha256.Size {
		return fmt.Errorf("fetch: sha256 %q is not 64 hex digits", sum)
	}
	if size < 0 {
		return fmt.Errorf("fetch: size %d is negative", size)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()

	h := sha256.New()
	have, err := c.resume(f, h, size)
	if err != nil {
		return err
	}
	if have < size {
		if err := c.get(ctx, u, f, h, have, size); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fetch: syncing %s: %w", path, err)
	}
	if got := h.Sum(nil); !bytesEqual(got, want) {
		f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("%w: got %s, published %s", ErrChecksum, hex.EncodeToString(got), strings.ToLower(sum))
	}
	return nil
}

// resume hashes the part already in f and returns its length, starting
// over when it is longer than the image.
func (c *Client) resume(f *os.File, h hash.Hash, size int64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("fetch: %w", err)
	}
	have := st.Size()
	if have > size {
		if err := f.Truncate(0); err != nil {
			return 0, fmt.Errorf("fetch: %w", err)
		}
		return 0, nil
	}
	if have > 0 {
		if _, err := io.CopyBuffer(h, io.LimitReader(f, have), make([]byte, 64<<10)); err != nil {
			return 0, fmt.Errorf("fetch: reading the part already downloaded: %w", err)
		}
	}
	return have, nil
}

// get requests the image from byte have on and appends it to f.
func (c *Client) get(ctx context.Context, u string, f *os.File, h hash.Hash, have, size int64) error {
	// A watchdog cancels the request when no byte has arrived for Stall.
	stall := c.Stall
	if stall <= 0 {
		stall = DefaultStall
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := time.AfterFunc(stall, func() { cancel(fmt.Errorf("nothing received for %v", stall)) })
	defer dog.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("fetch: %w", stalled(ctx, err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, err := contentRangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != have {
			return fmt.Errorf("fetch: %s: asked for bytes %d-, got Content-Range %q", u, have, resp.Header.Get("Content-Range"))
		}
	case resp.StatusCode == http.StatusOK:
		// The whole image (a server that ignores Range): start over.
		if have > 0 {
			if err := f.Truncate(0); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			h.Reset()
			have = 0
		}
	default:
		return fmt.Errorf("fetch: %s: %s", u, resp.Status)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	// One byte more than expected is read to notice an image that grew.
	w := &progress{w: io.MultiWriter(f, h), dog: dog, stall: stall}
	n, err := io.CopyBuffer(w, io.LimitReader(resp.Body, size-have+1), make([]byte, bufSize))
	if err != nil {
		return fmt.Errorf("fetch: %s: interrupted at byte %d of %d: %w", u, have+n, size, stalled(ctx, err))
	}
	switch got := have + n; {
	case got < size:
		return fmt.Errorf("fetch: %s: the server sent %d of %d bytes", u, got, size)
	case got > size:
		f.Close()
		_ = os.Remove(f.Name())
		return fmt.Errorf("%w: %s: the image is longer than the published %d bytes", ErrChecksum, u, size)
	}
	return nil
}

// progress passes writes on and feeds the stall watchdog.
type progress struct {
	w     io.Writer
	dog   *time.Timer
	stall time.Duration
}

func (p *progress) Write(b []byte) (int, error) {
	p.dog.Reset(p.stall)
	return p.w.Write(b)
}

// stalled names the watchdog as the cause of err when it fired.
func stalled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	return err
}

// contentRangeStart parses "bytes START-END/SIZE".
func contentRangeStart(v string) (int64, error) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, fmt.Errorf("not a byte range: %q", v)
	}
	start, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, fmt.Errorf("not a byte range: %q", v)
	}
	return strconv.ParseInt(start, 10, 64)
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
