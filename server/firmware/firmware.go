package firmware

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/fwsign"
	"github.com/saint-os/saint/roleconfig"
)

// Manifest is firmware/manifest.json.
type Manifest struct {
	Firmware       Release                  `json:"firmware"`
	Configs        map[string]ConfigVersion `json:"configs"`
	SupportedRoles []string                 `json:"supported_roles"`
}

// Release describes the current firmware image.
type Release struct {
	Version        string `json:"version"`
	ReleaseDate    string `json:"release_date"`
	ChecksumSHA256 string `json:"checksum_sha256"`
	MinHardwareRev string `json:"min_hardware_rev"`
	Changelog      string `json:"changelog"`
	SizeBytes      int64  `json:"size_bytes"`
	// Signature is the release key's Ed25519 signature over the version,
	// sha256 and size (fwsign.Message), base64; SigningKey is that key's
	// public half (fwsign.EncodePublic). Nodes check the signature against
	// the keys they trust, not against SigningKey.
	Signature  string `json:"signature,omitempty"`
	SigningKey string `json:"signing_key,omitempty"`
	// DowngradeSignature is the release key's permission for nodes that
	// have installed a newer version to go back to this one
	// (fwsign.SignDowngrade), base64; without it they refuse this release.
	DowngradeSignature string `json:"downgrade_signature,omitempty"`
}

// ConfigVersion is a role configuration's version and checksum.
type ConfigVersion struct {
	Version  string `json:"version"`
	Checksum string `json:"checksum"`
}

// ImagePath is the image's path inside the firmware directory.
const ImagePath = "current/saint_node.img"

// roleConfig is a configuration file held in memory.
type roleConfig struct {
	data     []byte
	version  string
	checksum string
}

// Repository is the server's firmware store: the generic node image with
// its manifest, and the role configurations nodes download when adopted.
// It is safe for concurrent use.
type Repository struct {
	dir string

	mu       sync.RWMutex
	manifest *Manifest
	problem  string // why the image is not offered, when it is not
	configs  map[string]roleConfig
	// requireSigned refuses to offer an image without a signature (the
	// server's default; see RequireSignatures).
	requireSigned bool
	// httpBase is the firmware HTTP server, "http://HOST:PORT" or
	// "http://:PORT" when it listens on every interface; "" when unknown.
	httpBase string
}

// SetHTTPAddr tells the repository where its Handler listens (a bound
// address such as "0.0.0.0:8080" or "192.168.10.1:8080"), so that offers
// carry the image's full URL. A listener on every interface is offered as
// "http://:PORT/…": the node fills in the host it reached the server at.
func (r *Repository) SetHTTPAddr(addr string) {
	host, port, err := net.SplitHostPort(addr)
	base := ""
	if err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			base = "http://:" + port
		} else {
			base = "http://" + net.JoinHostPort(host, port)
		}
	}
	r.mu.Lock()
	r.httpBase = base
	r.mu.Unlock()
}

// imageURL is the image's URL on the firmware HTTP server; r.mu held.
func (r *Repository) imageURL() string { return r.httpBase + "/firmware/" + ImagePath }

// Open reads the firmware directory dir (manifest.json, current/,
// configs/). Role configurations come from dir/configs, or from
// fallbackConfigs (the server's config/roles) for the keys dir lacks. A
// directory without a manifest is valid: the server then offers no
// firmware and nodes keep what they run.
func Open(dir, fallbackConfigs string) (*Repository, error) {
	r := &Repository{dir: dir, configs: map[string]roleConfig{}}
	for _, d := range []string{fallbackConfigs, filepath.Join(dir, "configs")} {
		if d == "" {
			continue
		}
		if err := readConfigs(d, r.configs); err != nil {
			return nil, err
		}
	}
	if err := r.Reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// readConfigs adds the role configurations in dir (ROLE_KEY.yaml, each
// parsed and checked to be named for the role it holds) to into. A missing
// dir adds nothing.
func readConfigs(dir string, into map[string]roleConfig) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("firmware: %w", err)
		}
		cfg, err := roleconfig.Parse(data)
		if err != nil {
			return fmt.Errorf("firmware: %s: %w", filepath.Join(dir, name), err)
		}
		key := strings.TrimSuffix(name, ".yaml")
		if want := msg.RoleKey(cfg.Role, cfg.Instance); want != key {
			return fmt.Errorf("firmware: %s: file holds role %q, expected it to be named %s.yaml", filepath.Join(dir, name), want, want)
		}
		into[key] = roleConfig{data: data, version: cfg.Version, checksum: roleconfig.Checksum(data)}
	}
	return nil
}

// Reload re-reads manifest.json and checks the image against it. An image
// whose size or sha256 does not match its manifest is not offered to nodes.
func (r *Repository) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

func (r *Repository) reloadLocked() error {
	r.manifest, r.problem = nil, ""
	if r.dir == "" {
		r.problem = "no firmware directory"
		return nil
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		r.problem = "no firmware published (" + filepath.Join(r.dir, "manifest.json") + " missing)"
		return nil
	}
	if err != nil {
		return fmt.Errorf("firmware: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("firmware: manifest.json: %w", err)
	}
	if m.Firmware.Version == "" {
		return errors.New("firmware: manifest.json: firmware.version: missing")
	}
	if len(m.Firmware.ChecksumSHA256) != 64 {
		return errors.New("firmware: manifest.json: firmware.checksum_sha256: want 64 hex digits")
	}
	sum, size, err := fileSHA256(filepath.Join(r.dir, ImagePath))
	switch {
	case err != nil:
		r.problem = "image unreadable: " + err.Error()
	case !strings.EqualFold(sum, m.Firmware.ChecksumSHA256):
		r.problem = fmt.Sprintf("image sha256 %s does not match manifest %s", sum[:12], m.Firmware.ChecksumSHA256[:12])
	case m.Firmware.SizeBytes != 0 && size != m.Firmware.SizeBytes:
		r.problem = fmt.Sprintf("image is %d bytes, manifest says %d", size, m.Firmware.SizeBytes)
	}
	if m.Firmware.SizeBytes == 0 {
		m.Firmware.SizeBytes = size
	}
	if r.problem == "" {
		r.problem = r.signatureProblem(m.Firmware)
	}
	r.manifest = &m
	return nil
}

// signatureProblem says why rel is not offered for its signature, or "".
func (r *Repository) signatureProblem(rel Release) string {
	if rel.Signature == "" {
		if !r.requireSigned {
			return ""
		}
		return "image not signed: publish it with a release key (saintctl firmware publish --sign-key, make firmware SIGN_KEY=...) or start the server with --allow-unsigned (development only)"
	}
	if err := VerifyRelease(rel); err != nil {
		return err.Error()
	}
	if rel.DowngradeSignature != "" {
		if err := VerifyDowngrade(rel); err != nil {
			return err.Error()
		}
	}
	return ""
}

// RequireSignatures makes the repository refuse to offer an image that
// carries no signature (saint-server does, unless --allow-unsigned). Left
// off, unsigned images are offered: nodes built without a release key
// install them on their sha256 alone, nodes with one refuse them. A
// signature that is there must verify either way.
func (r *Repository) RequireSignatures(require bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requireSigned = require
	return r.reloadLocked()
}

// SignRelease signs rel for image with key: it sets SigningKey and
// Signature over the image's sha256 and size and rel's version.
func SignRelease(key ed25519.PrivateKey, image []byte, rel *Release) {
	sum := sha256.Sum256(image)
	rel.SigningKey = fwsign.EncodePublic(key.Public().(ed25519.PublicKey))
	rel.Signature = fwsign.Sign(key, rel.Version, hex.EncodeToString(sum[:]), int64(len(image)))
}

// VerifyRelease checks rel's signature against its own SigningKey: that
// the manifest is whole, not that the key is trusted (the nodes decide).
func VerifyRelease(rel Release) error {
	key, err := fwsign.ParsePublic(rel.SigningKey)
	if err != nil {
		return fieldErr("signing_key", "%v", err)
	}
	if err := fwsign.Verify([]ed25519.PublicKey{key}, rel.Version, rel.ChecksumSHA256, rel.SizeBytes, rel.Signature); err != nil {
		return fieldErr("signature", "%v (signed by %s)", err, rel.SigningKey)
	}
	return nil
}

// SignDowngrade adds to rel the release key's permission for nodes that
// have installed a newer version to go back to rel's (fwsign.SignDowngrade).
func SignDowngrade(key ed25519.PrivateKey, rel *Release) {
	rel.DowngradeSignature = fwsign.SignDowngrade(key, rel.Version)
}

// VerifyDowngrade checks rel's downgrade permission against its own
// SigningKey: that the manifest is whole (the nodes check their own keys).
func VerifyDowngrade(rel Release) error {
	key, err := fwsign.ParsePublic(rel.SigningKey)
	if err != nil {
		return fieldErr("signing_key", "%v", err)
	}
	if err := fwsign.VerifyDowngrade([]ed25519.PublicKey{key}, rel.Version, rel.DowngradeSignature); err != nil {
		return fieldErr("downgrade_signature", "%v (signed by %s)", err, rel.SigningKey)
	}
	return nil
}

func fileSHA256(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Status is what firmware_status reports.
type Status struct {
	Available bool                     `json:"available"`
	Problem   string                   `json:"problem,omitempty"`
	Firmware  *Release                 `json:"firmware,omitempty"`
	Configs   map[string]ConfigVersion `json:"configs"`
	Roles     []string                 `json:"supported_roles"`
}

// Status returns the repository's current release and configurations.
func (r *Repository) Status() Status {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := Status{Available: r.manifest != nil && r.problem == "", Problem: r.problem, Configs: map[string]ConfigVersion{}}
	if r.manifest != nil {
		rel := r.manifest.Firmware
		st.Firmware = &rel
	}
	for k, c := range r.configs {
		st.Configs[k] = ConfigVersion{Version: c.version, Checksum: c.checksum}
		st.Roles = append(st.Roles, k)
	}
	sort.Strings(st.Roles)
	return st
}

// Check answers /saint/firmware/check. A node is offered the image when its
// version is older than the published one, or when it asks with Force
// (after a factory reset). Nodes are never downgraded unasked.
func (r *Repository) Check(req msg.FirmwareCheckRequest) msg.FirmwareCheckResponse {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.manifest == nil || r.problem != "" {
		return msg.FirmwareCheckResponse{Message: r.problem}
	}
	rel := r.manifest.Firmware
	resp := msg.FirmwareCheckResponse{
		Version:        rel.Version,
		ChecksumSHA256: rel.ChecksumSHA256,
		SizeBytes:      rel.SizeBytes,
		Changelog:      rel.Changelog,
		URL:            r.imageURL(),
		Signature:      rel.Signature,
		// Nodes that ran a newer version need it to take this one.
		DowngradeSignature: rel.DowngradeSignature,
	}
	if rel.MinHardwareRev != "" && req.HardwareRev != "" && CompareVersions(req.HardwareRev, rel.MinHardwareRev) < 0 {
		resp.Message = fmt.Sprintf("firmware %s needs hardware rev %s or later; this node is %s", rel.Version, rel.MinHardwareRev, req.HardwareRev)
		return resp
	}
	switch c := CompareVersions(req.CurrentVersion, rel.Version); {
	case req.Force:
		resp.UpdateAvailable = true
		resp.Message = "re-download requested"
	case c < 0:
		resp.UpdateAvailable = true
		resp.Message = fmt.Sprintf("update %s → %s", req.CurrentVersion, rel.Version)
	default:
		resp.Message = "up to date"
	}
	return resp
}

// Download answers /saint/firmware/download with one chunk of the image.
func (r *Repository) Download(req msg.FirmwareDownloadRequest) msg.FirmwareDownloadResponse {
	// The read lock is held through the read: a publish replaces the image
	// under the write lock, so a chunk never mixes two versions.
	r.mu.RLock()
	defer r.mu.RUnlock()
	m, problem := r.manifest, r.problem
	if m == nil || problem != "" {
		return msg.FirmwareDownloadResponse{Message: problem}
	}
	rel := m.Firmware
	resp := msg.FirmwareDownloadResponse{
		Version: rel.Version, URL: r.imageURL(),
		ChecksumSHA256: rel.ChecksumSHA256, SizeBytes: rel.SizeBytes, Offset: req.Offset,
	}
	if req.Version != "" && req.Version != rel.Version {
		resp.Message = fmt.Sprintf("version: %s is not published (current is %s)", req.Version, rel.Version)
		return resp
	}
	if req.Offset < 0 || req.Offset > rel.SizeBytes {
		resp.Message = fmt.Sprintf("offset: %d is outside the %d-byte image", req.Offset, rel.SizeBytes)
		return resp
	}
	n := req.Length
	if n <= 0 || n > msg.FirmwareChunkSize {
		n = msg.FirmwareChunkSize
	}
	if rest := rel.SizeBytes - req.Offset; n > rest {
		n = rest
	}
	f, err := os.Open(filepath.Join(r.dir, ImagePath))
	if err != nil {
		resp.Message = err.Error()
		return resp
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, req.Offset); err != nil && !errors.Is(err, io.EOF) {
		resp.Message = err.Error()
		return resp
	}
	resp.Data, resp.Success = buf, true
	return resp
}

// RoleConfig answers a node's request for its role configuration.
func (r *Repository) RoleConfig(role, instance string) (data []byte, version, checksum string, err error) {
	key := msg.RoleKey(role, instance)
	r.mu.RLock()
	c, ok := r.configs[key]
	r.mu.RUnlock()
	if !ok {
		return nil, "", "", fmt.Errorf("no configuration for role %s (have: %s)", key, strings.Join(r.Status().Roles, ", "))
	}
	return c.data, c.version, c.checksum, nil
}

// Handler serves the firmware tree over HTTP for the internal network:
// GET /firmware/manifest.json, /firmware/current/saint_node.img (with Range
// requests, so downloads resume), /firmware/configs/<role>.yaml.
func (r *Repository) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := path.Clean("/" + strings.TrimPrefix(req.URL.Path, "/firmware"))
		switch {
		case p == "/manifest.json", p == "/"+ImagePath, p == "/"+ImagePath+".sha256", p == "/current/changelog.md":
			http.ServeFile(w, req, filepath.Join(r.dir, filepath.FromSlash(p)))
		case strings.HasPrefix(p, "/configs/") && strings.HasSuffix(p, ".yaml"):
			role, inst := roleconfig.SplitKey(strings.TrimSuffix(path.Base(p), ".yaml"))
			data, _, _, err := r.RoleConfig(role, inst)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/yaml")
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			_, _ = w.Write(data)
		default:
			http.NotFound(w, req)
		}
	})
}

// CompareVersions compares dotted versions numerically (fwsign.CompareVersions,
// which nodes use too).
func CompareVersions(a, b string) int { return fwsign.CompareVersions(a, b) }
