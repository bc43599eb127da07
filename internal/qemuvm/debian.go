package qemuvm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DebianImage is the recipe of a Debian root file system image for a VM:
// mmdebstrap's minbase variant, systemd as init and the packages asked for,
// the kernel's modules, the agent (AgentScript as a systemd service) and
// the files and setup given. Build makes it once and keeps it in a cache
// directory under the hash of the recipe (and the kernel version), so a
// changed recipe makes a new image.
type DebianImage struct {
	// Name names the image's files in the cache, NAME-HASH.ext4 (default
	// debian-SUITE). Building a new one removes the other images of that
	// name: older recipes.
	Name string
	// Suite is the Debian release (default bookworm).
	Suite string
	// Packages are installed besides systemd, systemd-sysv, udev and kmod.
	Packages []string
	// Sources is the apt sources file packages come from (one line style
	// .list or deb822 .sources; default: this machine's own,
	// /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list).
	Sources string
	// Files maps a guest path to its contents, written as root with mode
	// 0644 (0755 under a bin/ or sbin/ directory).
	Files map[string]string
	// Setup is shell run as root inside the new root file system (chroot)
	// after the files are written, e.g. systemctl enable UNIT.
	Setup string
	// SizeMB is the size of the ext4 image (default 2048; it is sparse).
	SizeMB int
}

// BuildTimes says where Build spent its time.
type BuildTimes struct {
	Cached    bool
	Bootstrap float64 // seconds of mmdebstrap (0 when cached)
	Image     float64 // seconds of mke2fs (0 when cached)
}

// Build returns the path of the image in cacheDir, building it first when
// the cache holds none for this recipe. Building needs root (mmdebstrap in
// its root mode; the files of the image must belong to their owners),
// mmdebstrap and mke2fs; no loop devices or mounts. log gets the tools'
// progress (nil: none). Use the image through CopyImage: a VM writes to
// its disk.
func (d DebianImage) Build(ctx context.Context, k Kernel, cacheDir string, log io.Writer) (string, BuildTimes, error) {
	var times BuildTimes
	if log == nil {
		log = io.Discard
	}
	if d.Suite == "" {
		d.Suite = "bookworm"
	}
	if d.SizeMB == 0 {
		d.SizeMB = 2048
	}
	if d.Name == "" {
		d.Name = "debian-" + d.Suite
	}
	if d.Sources == "" {
		for _, s := range []string{"/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"} {
			if st, err := os.Stat(s); err == nil && st.Size() > 0 {
				d.Sources = s
				break
			}
		}
		if d.Sources == "" {
			return "", times, errors.New("qemuvm: no apt sources on this machine: set DebianImage.Sources")
		}
	}
	sources, err := os.ReadFile(d.Sources)
	if err != nil {
		return "", times, fmt.Errorf("qemuvm: %w", err)
	}
	for _, tool := range []string{"mmdebstrap", "mke2fs"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", times, fmt.Errorf("qemuvm: %s is not installed (Debian: mmdebstrap, e2fsprogs)", tool)
		}
	}
	packages := append([]string{"systemd", "systemd-sysv", "udev", "kmod"}, d.Packages...)
	sort.Strings(packages)
	files := map[string]string{
		"/usr/local/sbin/qemuvm-agent":             AgentScript,
		"/etc/systemd/system/qemuvm-agent.service": AgentUnit,
		"/etc/fstab": "/dev/vda / ext4 rw,errors=remount-ro 0 1\n",
	}
	for k, v := range d.Files {
		files[k] = v
	}
	setup := "systemctl enable qemuvm-agent.service\n" + d.Setup

	h := sha256.New()
	fmt.Fprintf(h, "qemuvm debian image 1\nsuite %s\nkernel %s\nsize %d\npackages %s\nsources %x\nsetup %s\n",
		d.Suite, k.Version, d.SizeMB, strings.Join(packages, ","), sha256.Sum256(sources), setup)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(h, "file %s %x\n", name, sha256.Sum256([]byte(files[name])))
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	image := filepath.Join(cacheDir, d.Name+"-"+key+".ext4")
	if _, err := os.Stat(image); err == nil {
		times.Cached = true
		return image, times, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", times, fmt.Errorf("qemuvm: %w", err)
	}
	work, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return "", times, fmt.Errorf("qemuvm: %w", err)
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "root")

	t0 := now()
	err = runTool(ctx, log, "mmdebstrap", "--variant=minbase", "--mode=root",
		"--include="+strings.Join(packages, ","),
		// Nothing the guest needs; smaller and faster.
		"--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		d.Suite, root, d.Sources)
	if err != nil {
		return "", times, err
	}
	modules := filepath.Join(root, "lib/modules")
	if err := os.MkdirAll(modules, 0o755); err != nil {
		return "", times, fmt.Errorf("qemuvm: %w", err)
	}
	if err := runTool(ctx, log, "cp", "-a", k.Modules, modules+"/"); err != nil {
		return "", times, err
	}
	for _, name := range names {
		path := filepath.Join(root, name)
		mode := os.FileMode(0o644)
		if strings.Contains(name, "/bin/") || strings.Contains(name, "/sbin/") {
			mode = 0o755
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", times, fmt.Errorf("qemuvm: %w", err)
		}
		if err := os.WriteFile(path, []byte(files[name]), mode); err != nil {
			return "", times, fmt.Errorf("qemuvm: %w", err)
		}
	}
	if err := runTool(ctx, log, "chroot", root, "/bin/sh", "-ec", setup); err != nil {
		return "", times, err
	}
	times.Bootstrap = since(t0)

	t0 = now()
	tmp := filepath.Join(work, "image.ext4")
	if err := runTool(ctx, log, "mke2fs", "-q", "-t", "ext4", "-L", "root", "-d", root, tmp, strconv.Itoa(d.SizeMB)+"M"); err != nil {
		return "", times, err
	}
	if err := os.Rename(tmp, image); err != nil {
		return "", times, fmt.Errorf("qemuvm: %w", err)
	}
	older, _ := filepath.Glob(filepath.Join(cacheDir, d.Name+"-????????????????.ext4"))
	for _, o := range older {
		if o != image {
			os.Remove(o)
		}
	}
	times.Image = since(t0)
	return image, times, nil
}

// CopyImage copies an image to dst sparsely (a VM's own disk from a cached
// image; a few seconds for a 2 GB image holding 500 MB).
func CopyImage(ctx context.Context, src, dst string) error {
	return runTool(ctx, io.Discard, "cp", "--sparse=always", "--reflink=auto", src, dst)
}

func runTool(ctx context.Context, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var tail tailBuffer
	cmd.Stdout = io.MultiWriter(log, &tail)
	cmd.Stderr = io.MultiWriter(log, &tail)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("qemuvm: %s %s: %w\n%s", name, strings.Join(args, " "), err, tail.String())
	}
	return nil
}

// tailBuffer keeps the last 4 kB written to it (a failed tool's message).
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
