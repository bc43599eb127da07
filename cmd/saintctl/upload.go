package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/server/firmware"
)

const uploadUsage = "usage: firmware upload FILE --version V [--server URL] [--token T] [--sign-key FILE [--allow-downgrade]] [--changelog TEXT] [--min-hardware-rev R] [--date YYYY-MM-DD]"

// progressMinBytes is the size from which an upload reports its progress.
const progressMinBytes = 1 << 20

// firmwareUpload sends a node image to the server's POST /api/firmware.
// token is the API token saintctl's own --token, --token-file or
// $SAINT_TOKEN gave; the subcommand's --token overrides it.
func firmwareUpload(args []string, token string, out, progress io.Writer) error {
	f := flag.NewFlagSet("firmware upload", flag.ContinueOnError)
	version := f.String("version", "", "firmware version, e.g. 1.3.0 (required)")
	server := f.String("server", envOr("SAINT_HTTP", "http://127.0.0.1:8000"), "the server's web address (http://HOST[:PORT]); the image goes to URL/api/firmware")
	tok := f.String("token", token, "API token (default: saintctl --token, --token-file or $SAINT_TOKEN)")
	changelog := f.String("changelog", "", "changelog text")
	minHW := f.String("min-hardware-rev", "", "oldest hardware revision the image runs on (server default 1.0)")
	date := f.String("date", "", "release date YYYY-MM-DD (server default: today)")
	timeout := f.Duration("timeout", 10*time.Minute, "give up after this long")
	signKey := f.String("sign-key", "", "release private key (saintctl firmware keygen) to sign the image with")
	allowDowngrade := f.Bool("allow-downgrade", false, "with --sign-key: also sign a downgrade permission for this version, so that the server publishes it though it is older than the current one and nodes that have installed a newer one take it when an update is forced")
	pos, err := parseInterleaved(f, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *version == "" {
		return errors.New(uploadUsage)
	}
	target, err := uploadURL(*server)
	if err != nil {
		return err
	}
	file, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer file.Close()
	h := sha256.New()
	size, err := io.Copy(h, file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", pos[0], err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	fields := map[string]string{"version": *version, "sha256": sum, "changelog": *changelog, "min_hardware_rev": *minHW, "release_date": *date}
	if *signKey != "" {
		key, err := fwsign.ReadPrivateFile(*signKey)
		if err != nil {
			return fmt.Errorf("--sign-key: %w", err)
		}
		fields["signing_key"] = fwsign.EncodePublic(key.Public().(ed25519.PublicKey))
		fields["signature"] = fwsign.Sign(key, *version, sum, size)
		if *allowDowngrade {
			fields["downgrade_signature"] = fwsign.SignDowngrade(key, *version)
		}
	} else if *allowDowngrade {
		return errors.New("--allow-downgrade needs --sign-key: the permission is signed with the release key")
	}

	// The body is streamed: the image is read from disk as it is sent.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeUploadBody(mw, fields, filepath.Base(pos[0]), &progressReader{r: file, size: size, w: progress}))
	}()
	req, err := http.NewRequest(http.MethodPost, target, pr)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if *tok != "" {
		req.Header.Set("Authorization", "Bearer "+*tok)
	}
	resp, err := (&http.Client{Timeout: *timeout}).Do(req)
	if err != nil {
		return fmt.Errorf("uploading to %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		var e firmware.UploadError
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return fmt.Errorf("server refused the image (%s): %s", resp.Status, e)
		}
		return fmt.Errorf("server refused the image (%s): %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var res firmware.UploadResult
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("server answer %q: %w", body, err)
	}
	fmt.Fprintf(out, "uploaded firmware %s (%d bytes, sha256 %s)", res.Firmware.Version, res.Firmware.SizeBytes, res.Firmware.ChecksumSHA256)
	if res.Archived != "" {
		fmt.Fprintf(out, "; %s archived", res.Archived)
	}
	fmt.Fprintln(out)
	return nil
}

func writeUploadBody(mw *multipart.Writer, fields map[string]string, name string, image io.Reader) error {
	for k, v := range fields {
		if v == "" {
			continue
		}
		if err := mw.WriteField(k, v); err != nil {
			return err
		}
	}
	part, err := mw.CreateFormFile("image", name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, image); err != nil {
		return err
	}
	return mw.Close()
}

// uploadURL turns the --server address into the upload endpoint.
func uploadURL(server string) (string, error) {
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--server %q: want http://HOST[:PORT]", server)
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return "", fmt.Errorf("--server %q: want an http:// address", server)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/api/firmware") {
		u.Path += "/api/firmware"
	}
	return u.String(), nil
}

// progressReader reports every tenth of an image of progressMinBytes or
// more as it is read.
type progressReader struct {
	r     io.Reader
	size  int64
	read  int64
	shown int64 // last tenth reported
	w     io.Writer
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	if p.w != nil && p.size >= progressMinBytes {
		if tenth := p.read * 10 / p.size; tenth > p.shown {
			p.shown = tenth
			fmt.Fprintf(p.w, "uploading: %3d%% (%d of %d bytes)\n", tenth*10, p.read, p.size)
		}
	}
	return n, err
}

// checkArch checks image is a static executable for goarch ("" checks
// nothing).
func checkArch(image []byte, goarch string) error {
	machines := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64, "arm": elf.EM_ARM}
	if goarch == "" {
		return nil
	}
	m, ok := machines[goarch]
	if !ok {
		return fmt.Errorf("--check-arch %q: want arm64, amd64 or arm", goarch)
	}
	return firmware.CheckExecutable(image, m)
}
