// Package proctest runs one of the project's commands as a real process in
// a test: started with --addr-file, waited for until it has written the
// addresses it listens on, and stopped with an interrupt (killed, and the
// test failed, if it does not exit). Its log is shown when the test fails.
// It dies with the test process however that ends (internal/childproc), so
// a test binary killed on its timeout leaves no simulation behind.
package proctest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/internal/childproc"
)

// Start runs bin with args plus "--addr-file FILE" in a temporary
// directory and returns the addresses it reports ("http", "ws", ...). The
// process is stopped when the test ends.
func Start(t *testing.T, bin string, args ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Base(bin)
	addrFile := filepath.Join(dir, "addrs.json")
	cmd := exec.Command(bin, append(args, "--addr-file", addrFile)...)
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	p, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Signal(syscall.SIGINT)
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			_ = p.Signal(syscall.SIGKILL)
			<-p.Done()
			t.Errorf("%s did not exit on interrupt", name)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
	var addrs map[string]string
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	return addrs
}
