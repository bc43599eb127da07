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
// sha256 is the uploader's hash of the image: the server recomputes it, so
// an image damaged on the way is refused. The image must be a statically
// linked ELF executable for opts.Machine. Answers are JSON: 201 with
// UploadResult, or 4xx with UploadError naming the field.
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
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, UploadError{Status: "error", Message: "firmware upload takes POST"})
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, opts.MaxImageBytes+1<<20)
		fields, image, err := readUpload(req, opts.MaxImageBytes)
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
		if err := checkSum(image, fields["sha256"]); err != nil {
			refuse(w, err)
			return
		}
		if err := CheckExecutable(image, opts.Machine); err != nil {
			refuse(w, err)
			return
		}
		before := r.Status()
		m, err := r.Publish(image, rel)
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

// readUpload returns the request's fields and image, in either shape.
func readUpload(req *http.Request, maxImage int64) (map[string]string, []byte, error) {
	fields := map[string]string{}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		for k, v := range req.URL.Query() {
			if len(v) > 0 {
				fields[k] = v[0]
			}
		}
		image, err := readLimited(req.Body, maxImage)
		return fields, image, err
	}
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, nil, fieldErr("body", "multipart: %v", err)
	}
	var image []byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fieldErr("body", "multipart: %v", err)
		}
		name := part.FormName()
		if name == "image" {
			if image, err = readLimited(part, maxImage); err != nil {
				return nil, nil, err
			}
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, 64<<10))
		if err != nil {
			return nil, nil, fieldErr(name, "%v", err)
		}
		fields[name] = strings.TrimSpace(string(value))
	}
	if image == nil {
		return nil, nil, fieldErr("image", "missing; send the binary in a file part named image")
	}
	return fields, image, nil
}

func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fieldErr("image", "reading: %v", err)
	}
	if int64(len(data)) > max {
		return nil, fieldErr("image", "larger than the %d bytes this server accepts", max)
	}
	return data, nil
}

// checkSum compares the uploader's sha256 with the image's.
func checkSum(image []byte, want string) error {
	want = strings.ToLower(strings.TrimSpace(want))
	if want == "" {
		return fieldErr("sha256", "missing; send the image's sha256 (64 hex digits) so damage in transit is caught")
	}
	if _, err := hex.DecodeString(want); err != nil || len(want) != 64 {
		return fieldErr("sha256", "%q: want 64 hex digits", want)
	}
	sum := sha256.Sum256(image)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fieldErr("sha256", "the image received hashes to %s, not %s (%d bytes received)", got, want, len(image))
	}
	return nil
}

// CheckExecutable checks that image is a statically linked ELF executable
// for machine: what a node can exec without a loader or libraries.
func CheckExecutable(image []byte, machine elf.Machine) error {
	if len(image) == 0 {
		return fieldErr("image", "empty")
	}
	f, err := elf.NewFile(bytes.NewReader(image))
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
	switch {
	case errors.As(err, &tooBig):
		writeJSON(w, http.StatusRequestEntityTooLarge, UploadError{Status: "error", Field: "image", Message: err.Error()})
	case errors.As(err, &fe):
		code := http.StatusBadRequest
		if fe.Conflict {
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
