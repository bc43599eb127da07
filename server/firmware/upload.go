package firmware

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults for UploadOptions fields left zero.
const (
	// DefaultMaxImageBytes bounds an upload: a static node binary is about
	// 15 MB, so this leaves room without letting a client fill the disk.
	DefaultMaxImageBytes = 128 << 20
	// DefaultMachine is the node's architecture: 64-bit Raspberry Pi OS.
	DefaultMachine = elf.EM_AARCH64
)

// UploadOptions configures UploadHandler.
type UploadOptions struct {
	// Machine is the ELF machine an image must be built for; 0 means
	// DefaultMachine. A development server whose nodes run on a PC sets
	// elf.EM_X86_64.
	Machine elf.Machine
	// MaxImageBytes bounds the image; 0 means DefaultMaxImageBytes.
	MaxImageBytes int64
	// Now gives the release date when the upload does not; nil means the
	// wall clock (the handler runs on an HTTP goroutine, not an executor).
	Now func() time.Time
}

// UploadResult is the answer to a successful upload.
type UploadResult struct {
	Status   string  `json:"status"` // "ok"
	Firmware Release `json:"firmware"`
	Archived string  `json:"archived,omitempty"` // the version moved to archive/
}

// UploadError is the answer to a refused upload: the field at fault and why.
type UploadError struct {
	Status  string `json:"status"` // "error"
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// UploadDir is the directory inside the repository where uploads are
// staged while they arrive. It is not served, and what is left in it (a
// server stopped in the middle of an upload) is removed when the upload
// handler is made.
const UploadDir = ".upload"

// UploadHandler accepts a new firmware image at POST /api/firmware and
// publishes it (current → archive/, then the new image, manifest last)
// once it checks out. Two request shapes:
//
//   - multipart/form-data with the image in a file part named "image" and
//     the fields version, sha256, and optionally changelog, release_date
//     (YYYY-MM-DD, default today), min_hardware_rev (default 1.0);
//   - any other content type: the body is the image and the fields are
//     URL query parameters (?version=1.3.0&sha256=...).
//
// The image is never held in memory: it streams to a file in UploadDir,
// hashed on the way, and is refused with 413 as soon as it passes
// opts.MaxImageBytes. A refused, aborted or failed upload leaves no file
// behind; an accepted one is renamed into place.
//
// sha256 is the uploader's hash of the image: the server compares it with
// the hash of what arrived, so an image damaged on the way is refused. The
// image must be a statically linked ELF executable for opts.Machine.
// Answers are JSON: 201 with UploadResult, or 4xx with UploadError naming
// the field.
//
// The handler does no authentication: mount it behind the server's.
func (r *Repository) UploadHandler(opts UploadOptions) http.Handler {
	if opts.Machine == 0 {
		opts.Machine = DefaultMachine
	}
	if opts.MaxImageBytes <= 0 {
		opts.MaxImageBytes = DefaultMaxImageBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if r.dir != "" {
		_ = os.RemoveAll(filepath.Join(r.dir, UploadDir))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, UploadError{Status: "error", Message: "firmware upload takes POST"})
			return
		}
		if r.dir == "" {
			refuse(w, errors.New("firmware: the repository has no directory to publish into"))
			return
		}
		// The fields around the image are small (64 KiB each); this bounds
		// a multipart body as a whole, the image is bounded on its own.
		req.Body = http.MaxBytesReader(w, req.Body, opts.MaxImageBytes+1<<20)
		fields, image, err := r.readUpload(req, opts.MaxImageBytes)
		if image != nil {
			defer image.discard()
		}
		if err != nil {
			refuse(w, err)
			return
		}
		rel := Release{
			Version:        fields["version"],
			ReleaseDate:    fields["release_date"],
			MinHardwareRev: fields["min_hardware_rev"],
			Changelog:      fields["changelog"],
			Signature:      fields["signature"],
			SigningKey:     fields["signing_key"],
			// An older version than the current one is published only
			// with the release key's permission (publish checks it).
			DowngradeSignature: fields["downgrade_signature"],
		}
		if rel.ReleaseDate == "" {
			rel.ReleaseDate = opts.Now().UTC().Format("2006-01-02")
		}
		if rel.MinHardwareRev == "" {
			rel.MinHardwareRev = "1.0"
		}
		if err := rel.Validate(); err != nil {
			refuse(w, err)
			return
		}
		if err := image.checkSum(fields["sha256"]); err != nil {
			refuse(w, err)
			return
		}
		if err := checkELF(image.file, image.size, opts.Machine); err != nil {
			refuse(w, err)
			return
		}
		before := r.Status()
		m, err := r.publish(image.release(), rel)
		if err != nil {
			refuse(w, err)
			return
		}
		res := UploadResult{Status: "ok", Firmware: m.Firmware}
		if before.Available && before.Firmware != nil {
			res.Archived = before.Firmware.Version
		}
		writeJSON(w, http.StatusCreated, res)
	})
}

// stagedImage is an upload's image on disk in UploadDir, with the hash
// and size of what arrived.
type stagedImage struct {
	file *os.File
	sum  [sha256.Size]byte
	size int64
}

// stage streams src into a new file in the repository's UploadDir,
// hashing it on the way, and refuses it (removing the file) when it
// passes max bytes or cannot be read to its end.
func (r *Repository) stage(src io.Reader, max int64) (*stagedImage, error) {
	dir := filepath.Join(r.dir, UploadDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	f, err := os.CreateTemp(dir, "image-*")
	if err != nil {
		return nil, fmt.Errorf("firmware: %w", err)
	}
	img := &stagedImage{file: f}
	h := sha256.New()
	// One byte past the limit tells an image of exactly max bytes from a
	// larger one.
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, max+1))
	switch {
	case err != nil:
		img.discard()
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, fieldErr("image", "upload ended after %d bytes: %v", n, err)
	case n > max:
		img.discard()
		return nil, &tooLargeError{max: max}
	}
	img.size = n
	h.Sum(img.sum[:0])
	return img, nil
}

// discard closes and removes the staged file (after publish renamed it,
// there is nothing left to remove).
func (s *stagedImage) discard() {
	_ = s.file.Close()
	_ = os.Remove(s.file.Name())
}

// checkSum compares the uploader's sha256 with the image's.
func (s *stagedImage) checkSum(want string) error {
	return compareSum(s.sum, s.size, want)
}

func (s *stagedImage) release() releaseImage {
	return releaseImage{staged: s.file, sum: s.sum, size: s.size}
}

// tooLargeError refuses an image over UploadOptions.MaxImageBytes (413).
type tooLargeError struct{ max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("image: larger than the %d bytes (%.0f MiB) this server accepts; a static saint-node build is about 15 MB", e.max, float64(e.max)/(1<<20))
}

// readUpload returns the request's fields and its image staged on disk,
// in either shape. On error nothing is left staged.
func (r *Repository) readUpload(req *http.Request, maxImage int64) (map[string]string, *stagedImage, error) {
	fields := map[string]string{}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		for k, v := range req.URL.Query() {
			if len(v) > 0 {
				fields[k] = v[0]
			}
		}
		image, err := r.stage(req.Body, maxImage)
		return fields, image, err
	}
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, nil, fieldErr("body", "multipart: %v", err)
	}
	var image *stagedImage
	fail := func(err error) (map[string]string, *stagedImage, error) {
		if image != nil {
			image.discard()
		}
		return nil, nil, err
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return fail(err)
			}
			return fail(fieldErr("body", "multipart: %v", err))
		}
		name := part.FormName()
		if name == "image" {
			if image != nil {
				return fail(fieldErr("image", "sent twice; send one file part named image"))
			}
			if image, err = r.stage(part, maxImage); err != nil {
				return fail(err)
			}
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, 64<<10))
		if err != nil {
			return fail(fieldErr(name, "%v", err))
		}
		fields[name] = strings.TrimSpace(string(value))
	}
	if image == nil {
		return nil, nil, fieldErr("image", "missing; send the binary in a file part named image")
	}
	return fields, image, nil
}

// compareSum compares the uploader's sha256 with the hash of the size
// bytes that arrived.
func compareSum(sum [sha256.Size]byte, size int64, want string) error {
	want = strings.ToLower(strings.TrimSpace(want))
	if want == "" {
		return fieldErr("sha256", "missing; send the image's sha256 (64 hex digits) so damage in transit is caught")
	}
	if _, err := hex.DecodeString(want); err != nil || len(want) != 64 {
		return fieldErr("sha256", "%q: want 64 hex digits", want)
	}
	if got := hex.EncodeToString(sum[:]); got != want {
		return fieldErr("sha256", "the image received hashes to %s, not %s (%d bytes received)", got, want, size)
	}
	return nil
}

// CheckExecutable checks that image is a statically linked ELF executable
// for machine: what a node can exec without a loader or libraries.
func CheckExecutable(image []byte, machine elf.Machine) error {
	return checkELF(bytes.NewReader(image), int64(len(image)), machine)
}

// checkELF is CheckExecutable on an image of size bytes read in place
// (an upload staged on disk).
func checkELF(image io.ReaderAt, size int64, machine elf.Machine) error {
	if size == 0 {
		return fieldErr("image", "empty")
	}
	f, err := elf.NewFile(io.NewSectionReader(image, 0, size))
	if err != nil {
		return fieldErr("image", "not an ELF executable: %v", err)
	}
	defer f.Close()
	if f.Machine != machine {
		return fieldErr("image", "built for %v; nodes run %v (cross-compile with GOARCH=%s)", f.Machine, machine, goarch(machine))
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fieldErr("image", "ELF type %v is not an executable", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fieldErr("image", "dynamically linked (needs a program interpreter); build with CGO_ENABLED=0")
		}
	}
	return nil
}

func goarch(m elf.Machine) string {
	switch m {
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_ARM:
		return "arm"
	}
	return "?"
}

// refuse answers err: 409 for a version that is not newer, 400 for any
// other field, 413 for a body over the limit, 500 otherwise.
func refuse(w http.ResponseWriter, err error) {
	var fe *FieldError
	var tooBig *http.MaxBytesError
	var tooLarge *tooLargeError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, UploadError{Status: "error", Field: "image", Message: tooLarge.Error()})
	case errors.As(err, &tooBig):
		writeJSON(w, http.StatusRequestEntityTooLarge, UploadError{Status: "error", Field: "image",
			Message: fmt.Sprintf("image: the request is larger than the %d bytes this server accepts", tooBig.Limit)})
	case errors.As(err, &fe):
		code := http.StatusBadRequest
		if errors.Is(fe, ErrNotNewer) {
			code = http.StatusConflict
		}
		writeJSON(w, code, UploadError{Status: "error", Field: fe.Field, Message: fe.Error()})
	default:
		writeJSON(w, http.StatusInternalServerError, UploadError{Status: "error", Message: err.Error()})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// String makes UploadError usable in messages.
func (e UploadError) String() string {
	if e.Field == "" {
		return e.Message
	}
	return fmt.Sprintf("%s (field %s)", e.Message, e.Field)
}
