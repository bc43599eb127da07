package qemuvm

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Kernel is an installed Debian kernel: the image QEMU boots, the initrd
// Debian made for it (initramfs-tools; it finds a virtio root disk), and its
// modules.
type Kernel struct {
	Version string // e.g. 6.1.0-56-amd64
	Image   string // /boot/vmlinuz-VERSION
	Initrd  string // /boot/initrd.img-VERSION
	Modules string // /lib/modules/VERSION
}

// FindKernel returns the newest kernel installed under /boot that has an
// initrd and a modules tree (Debian's linux-image-amd64). The error says what
// to install when there is none.
func FindKernel() (Kernel, error) {
	return findKernel("/boot", "/lib/modules")
}

func findKernel(bootDir, modulesDir string) (Kernel, error) {
	images, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var found []Kernel
	for _, image := range images {
		version := strings.TrimPrefix(filepath.Base(image), "vmlinuz-")
		k := Kernel{
			Version: version,
			Image:   image,
			Initrd:  filepath.Join(bootDir, "initrd.img-"+version),
			Modules: filepath.Join(modulesDir, version),
		}
		if !readable(k.Image) || !readable(k.Initrd) || !readable(filepath.Join(k.Modules, "modules.dep")) {
			continue
		}
		found = append(found, k)
	}
	if len(found) == 0 {
		return Kernel{}, fmt.Errorf("qemuvm: no kernel in %s with its initrd and %s/VERSION/modules.dep (install linux-image-amd64)", bootDir, modulesDir)
	}
	sort.Slice(found, func(i, j int) bool { return versionLess(found[i].Version, found[j].Version) })
	return found[len(found)-1], nil
}

func readable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// versionLess compares kernel versions numerically field by field
// (6.1.0-10 < 6.1.0-9 as strings, not as versions).
func versionLess(a, b string) bool {
	fa, fb := strings.FieldsFunc(a, notDigit), strings.FieldsFunc(b, notDigit)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if len(fa[i]) != len(fb[i]) {
			return len(fa[i]) < len(fb[i])
		}
		if fa[i] != fb[i] {
			return fa[i] < fb[i]
		}
	}
	return len(fa) < len(fb)
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// ModuleFiles returns the files of the named modules and of every module
// they depend on (modules.dep), in an order insmod can load them: each
// module after its dependencies, each once. Names take - or _ alike.
func (k Kernel) ModuleFiles(names ...string) ([]string, error) {
	deps, err := readModulesDep(filepath.Join(k.Modules, "modules.dep"))
	if err != nil {
		return nil, err
	}
	byName := make(map[string]string, len(deps))
	for path := range deps {
		byName[moduleName(path)] = path
	}
	var order []string
	seen := map[string]bool{}
	var visit func(path string)
	visit = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		for _, d := range deps[path] {
			visit(d)
		}
		order = append(order, filepath.Join(k.Modules, path))
	}
	for _, name := range names {
		path, ok := byName[strings.ReplaceAll(name, "-", "_")]
		if !ok {
			return nil, fmt.Errorf("qemuvm: kernel %s has no module %q (built in, or not built)", k.Version, name)
		}
		visit(path)
	}
	return order, nil
}

// moduleName is the module name of a path in modules.dep.
func moduleName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

func readModulesDep(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	defer f.Close()
	deps := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		mod, list, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(list)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("qemuvm: %s: %w", path, err)
	}
	if len(deps) == 0 {
		return nil, errors.New("qemuvm: " + path + " lists no modules")
	}
	return deps, nil
}
