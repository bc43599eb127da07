package qemuvm

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config describes a VM. Exactly one of Disk and Initramfs is set.
type Config struct {
	Kernel Kernel
	// Disk is a raw root file system image (ext4), attached as a virtio disk
	// and booted with the kernel's own initrd as root=/dev/vda. The VM writes
	// to it: a later VM on the same file sees what this one left, power cut
	// or not (what the guest had not yet written is lost).
	Disk string
	// Initramfs is an initramfs file (BusyboxInitramfs) for a kernel-only boot.
	Initramfs string
	// Append is added to the kernel command line (console=ttyS0 panic=-1 and
	// the root are already there).
	Append string
	// MemoryMB and CPUs default to 1024 and 2.
	MemoryMB, CPUs int
	// KVM asks for KVM instead of TCG. Nested KVM can hang a guest
	// indefinitely; use it only where KVMWorks says it works.
	KVM bool
	// Reboot lets a guest reboot or a watchdog reset restart the guest. By
	// default qemu exits instead (-no-reboot).
	Reboot bool
	// Forwards are guest TCP ports reachable from this machine, each on a
	// free port of 127.0.0.1 (VM.HostAddr).
	Forwards []int
	// GuestForwards make GuestAddr (10.0.2.100:Port in the guest) connect to
	// Host (host:port of this machine, normally on 127.0.0.1). QEMU opens
	// each such connection once, at start: one guest connection each.
	GuestForwards []GuestForward
	// SerialPorts is how many extra serial ports (ttyS1, ttyS2, ttyS3: at
	// most 3) the guest has, each the other end of a pseudo-terminal of this
	// machine (VM.SerialPTY).
	SerialPorts int
	// Console receives a copy of the guest's serial console (ttyS0) as it
	// comes; nil for none.
	Console io.Writer
}

// GuestForward is one guest-to-host forward.
type GuestForward struct {
	Port int    // the guest connects to 10.0.2.100:Port
	Host string // and reaches this address of this machine
}

// GuestForwardAddr is the guest-side address of GuestForwards.
const GuestForwardAddr = "10.0.2.100"

// VM is a running qemu. Its methods are safe for concurrent use.
type VM struct {
	cfg      Config
	cmd      *exec.Cmd
	dir      string
	hostPort map[int]int
	ptys     []string
	exited   chan struct{}
	exitErr  error

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when the console, boots or exit change
	console  []byte
	consoleN int // bytes of console output dropped from the front of console
	stderr   []byte
	boots    []string
	agent    net.Conn
	pending  map[string]chan agentReply
	nextID   int
	runMu    sync.Mutex
}

type agentReply struct {
	status int
	output string
	err    error
}

// ErrRebooted is what Run returns when the guest restarted (its agent said
// READY again) before the command answered.
var ErrRebooted = errors.New("qemuvm: the guest rebooted before the command answered")

// consoleKeep bounds the console kept in memory (its tail).
const consoleKeep = 8 << 20

// Start starts qemu. It returns once qemu runs and its pseudo-terminals are
// known; the guest is still booting (Ready waits for its agent).
func Start(ctx context.Context, cfg Config) (*VM, error) {
	if (cfg.Disk == "") == (cfg.Initramfs == "") {
		return nil, errors.New("qemuvm: Config needs exactly one of Disk and Initramfs")
	}
	if cfg.SerialPorts < 0 || cfg.SerialPorts > 3 {
		return nil, fmt.Errorf("qemuvm: Config.SerialPorts %d: want 0 to 3 (ttyS1 to ttyS3)", cfg.SerialPorts)
	}
	if cfg.MemoryMB == 0 {
		cfg.MemoryMB = 1024
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	dir, err := os.MkdirTemp("", "qemuvm-")
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	vm := &VM{cfg: cfg, dir: dir, hostPort: map[int]int{}, exited: make(chan struct{}),
		changed: make(chan struct{}), pending: map[string]chan agentReply{}}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()

	// qemu connects to both sockets before it runs the guest.
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	defer ln.Close()
	consoleSock := filepath.Join(dir, "console.sock")
	consoleLn, err := net.Listen("unix", consoleSock)
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	defer consoleLn.Close()

	args, err := vm.args(sock, consoleSock)
	if err != nil {
		return nil, err
	}
	vm.cmd = exec.Command("qemu-system-x86_64", args...)
	vm.cmd.Stdin = nil
	stdout, err := vm.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	stderr, err := vm.cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("qemuvm: %w", err)
	}
	if err := vm.cmd.Start(); err != nil {
		return nil, fmt.Errorf("qemuvm: starting qemu-system-x86_64 (install qemu-system-x86): %w", err)
	}
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { defer pipes.Done(); vm.readStderr(stdout) }()
	go func() { defer pipes.Done(); vm.readStderr(stderr) }()
	go func() {
		pipes.Wait()
		err := vm.cmd.Wait()
		vm.mu.Lock()
		vm.exitErr = err
		close(vm.exited)
		vm.failPending(fmt.Errorf("qemuvm: qemu exited (%v)", err))
		vm.notifyLocked()
		vm.mu.Unlock()
	}()

	for _, l := range []net.Listener{consoleLn, ln} {
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := l.Accept()
			if err == nil {
				accepted <- c
			}
		}()
		select {
		case c := <-accepted:
			if l == ln {
				vm.mu.Lock()
				vm.agent = c
				vm.mu.Unlock()
				go vm.readAgent(c)
			} else {
				go vm.readConsole(c)
			}
		case <-vm.exited:
			return nil, fmt.Errorf("qemuvm: qemu exited at start: %v: %s", vm.exitErr, vm.Stderr())
		case <-ctx.Done():
			vm.PowerCut()
			return nil, fmt.Errorf("qemuvm: qemu did not start: %w", ctx.Err())
		}
	}
	if err := vm.wait(ctx, func() bool { return len(vm.parsePTYs()) >= cfg.SerialPorts }); err != nil {
		vm.PowerCut()
		return nil, fmt.Errorf("qemuvm: the serial ports' pseudo-terminals: %w: %s", err, vm.Stderr())
	}
	vm.ptys = vm.parsePTYs()
	ok = true
	return vm, nil
}

func (vm *VM) args(sock, consoleSock string) ([]string, error) {
	cfg := vm.cfg
	accel := "tcg"
	if cfg.KVM {
		accel = "kvm"
	}
	appendLine := "console=ttyS0 panic=-1 " + cfg.Append
	args := []string{
		"-accel", accel, "-m", strconv.Itoa(cfg.MemoryMB), "-smp", strconv.Itoa(cfg.CPUs),
		"-display", "none", "-monitor", "none", "-no-user-config", "-nodefaults",
		"-chardev", "socket,id=console,path=" + consoleSock, "-serial", "chardev:console",
		"-kernel", cfg.Kernel.Image,
		"-device", "i6300esb",
		"-device", "virtio-serial-pci",
		"-chardev", "socket,id=agent,path=" + sock,
		"-device", "virtserialport,chardev=agent,name=" + AgentPortName,
	}
	if !cfg.Reboot {
		args = append(args, "-no-reboot")
	}
	if cfg.Disk != "" {
		args = append(args, "-initrd", cfg.Kernel.Initrd,
			"-drive", "file="+cfg.Disk+",if=virtio,format=raw,cache=writeback")
		appendLine = "root=/dev/vda rw " + appendLine
	} else {
		args = append(args, "-initrd", cfg.Initramfs)
		appendLine = "rdinit=/init " + appendLine
	}
	args = append(args, "-append", appendLine)
	for i := 1; i <= cfg.SerialPorts; i++ {
		id := "serial" + strconv.Itoa(i)
		args = append(args, "-chardev", "pty,id="+id, "-serial", "chardev:"+id)
	}
	if len(cfg.Forwards) > 0 || len(cfg.GuestForwards) > 0 {
		netdev := "user,id=net0,restrict=on"
		for _, guest := range cfg.Forwards {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			vm.hostPort[guest] = port
			netdev += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:%d", port, guest)
		}
		for _, g := range cfg.GuestForwards {
			netdev += fmt.Sprintf(",guestfwd=tcp:%s:%d-tcp:%s", GuestForwardAddr, g.Port, g.Host)
		}
		args = append(args, "-netdev", netdev, "-device", "virtio-net-pci,netdev=net0")
	} else {
		args = append(args, "-nic", "none")
	}
	return args, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("qemuvm: a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// HostAddr is the 127.0.0.1:PORT of this machine that reaches guestPort (one
// of Config.Forwards), or "" for a port not forwarded.
func (vm *VM) HostAddr(guestPort int) string {
	p, ok := vm.hostPort[guestPort]
	if !ok {
		return ""
	}
	return "127.0.0.1:" + strconv.Itoa(p)
}

// SerialPTY is the pseudo-terminal of this machine that is the other end of
// the guest's ttyS<n> (n from 1 to Config.SerialPorts).
func (vm *VM) SerialPTY(n int) string {
	if n < 1 || n > len(vm.ptys) {
		return ""
	}
	return vm.ptys[n-1]
}

var ptyLine = regexp.MustCompile(`char device redirected to (\S+) \(label serial(\d)\)`)

func (vm *VM) parsePTYs() []string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	ptys := make([]string, vm.cfg.SerialPorts)
	n := 0
	for _, m := range ptyLine.FindAllSubmatch(vm.stderr, -1) {
		i, _ := strconv.Atoi(string(m[2]))
		if i >= 1 && i <= len(ptys) && ptys[i-1] == "" {
			ptys[i-1] = string(m[1])
			n++
		}
	}
	return ptys[:n]
}

func (vm *VM) readConsole(r io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if vm.cfg.Console != nil {
				vm.cfg.Console.Write(buf[:n])
			}
			vm.mu.Lock()
			vm.console = append(vm.console, buf[:n]...)
			if over := len(vm.console) - consoleKeep; over > 0 {
				vm.console = append([]byte(nil), vm.console[over:]...)
				vm.consoleN += over
			}
			vm.notifyLocked()
			vm.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (vm *VM) readStderr(r io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			vm.mu.Lock()
			if len(vm.stderr) < 1<<20 {
				vm.stderr = append(vm.stderr, buf[:n]...)
			}
			vm.notifyLocked()
			vm.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (vm *VM) readAgent(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		fields := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 3)
		vm.mu.Lock()
		if fields[0] == "READY" && len(fields) >= 2 {
			vm.boots = append(vm.boots, fields[1])
			vm.failPending(ErrRebooted)
			vm.notifyLocked()
		} else if ch, ok := vm.pending[fields[0]]; ok && len(fields) == 3 {
			delete(vm.pending, fields[0])
			var rep agentReply
			rep.status, rep.err = strconv.Atoi(fields[1])
			out, err := base64.StdEncoding.DecodeString(fields[2])
			rep.output = string(out)
			if rep.err == nil && err != nil {
				rep.err = fmt.Errorf("qemuvm: agent reply: %w", err)
			}
			ch <- rep
		}
		vm.mu.Unlock()
	}
}

func (vm *VM) failPending(err error) {
	for id, ch := range vm.pending {
		ch <- agentReply{err: err}
		delete(vm.pending, id)
	}
}

func (vm *VM) notifyLocked() {
	close(vm.changed)
	vm.changed = make(chan struct{})
}

// wait waits until cond (called without vm.mu held) holds, qemu
// exits or ctx ends.
func (vm *VM) wait(ctx context.Context, cond func() bool) error {
	for {
		vm.mu.Lock()
		ch := vm.changed
		vm.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-vm.exited:
			if cond() {
				return nil
			}
			return fmt.Errorf("qemuvm: qemu exited (%v)", vm.exitErr)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Ready waits for the guest's agent of the first boot (see WaitBoots).
func (vm *VM) Ready(ctx context.Context) error { return vm.WaitBoots(ctx, 1) }

// WaitBoots waits until the guest's agent has started n times since Start
// (a reboot under Config.Reboot starts it again).
func (vm *VM) WaitBoots(ctx context.Context, n int) error {
	err := vm.wait(ctx, func() bool { return vm.Boots() >= n })
	if err != nil {
		return fmt.Errorf("qemuvm: waiting for the guest agent (boot %d): %w", n, err)
	}
	return nil
}

// Boots is how many times the guest's agent has started since Start.
func (vm *VM) Boots() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return len(vm.boots)
}

// Run runs a shell command line in the guest as root (sh, stdin /dev/null)
// and returns its combined output and exit status. err is for the channel
// (the guest rebooted, qemu exited, ctx ended), not the command's failure.
// Commands run one at a time.
func (vm *VM) Run(ctx context.Context, command string) (output string, status int, err error) {
	vm.runMu.Lock()
	defer vm.runMu.Unlock()
	if err := vm.Ready(ctx); err != nil {
		return "", 0, err
	}
	vm.mu.Lock()
	vm.nextID++
	id := "c" + strconv.Itoa(vm.nextID)
	ch := make(chan agentReply, 1)
	vm.pending[id] = ch
	conn := vm.agent
	vm.mu.Unlock()
	line := id + " " + base64.StdEncoding.EncodeToString([]byte(command)) + "\n"
	if _, err := io.WriteString(conn, line); err != nil {
		vm.forget(id)
		return "", 0, fmt.Errorf("qemuvm: sending a command: %w", err)
	}
	select {
	case rep := <-ch:
		return rep.output, rep.status, rep.err
	case <-ctx.Done():
		vm.forget(id)
		return "", 0, fmt.Errorf("qemuvm: %q: %w", command, ctx.Err())
	}
}

func (vm *VM) forget(id string) {
	vm.mu.Lock()
	delete(vm.pending, id)
	vm.mu.Unlock()
}

// ConsoleLen is the number of console bytes seen so far: an offset for
// WaitConsole to look only at what comes after.
func (vm *VM) ConsoleLen() int {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.consoleN + len(vm.console)
}

// WaitConsole waits until the console output from offset from on matches re
// and returns the offset just after the match.
func (vm *VM) WaitConsole(ctx context.Context, re *regexp.Regexp, from int) (int, error) {
	end := -1
	err := vm.wait(ctx, func() bool {
		vm.mu.Lock()
		defer vm.mu.Unlock()
		start := from - vm.consoleN
		if start < 0 {
			start = 0
		}
		if start > len(vm.console) {
			return false
		}
		if loc := re.FindIndex(vm.console[start:]); loc != nil {
			end = vm.consoleN + start + loc[1]
			return true
		}
		return false
	})
	if err != nil {
		return 0, fmt.Errorf("qemuvm: waiting for %q on the console: %w", re, err)
	}
	return end, nil
}

// ConsoleTail is the last n bytes of the console (what to show when
// something failed).
func (vm *VM) ConsoleTail(n int) string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if len(vm.console) > n {
		return string(vm.console[len(vm.console)-n:])
	}
	return string(vm.console)
}

// Stderr is what qemu itself printed (stdout and stderr).
func (vm *VM) Stderr() string {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return string(vm.stderr)
}

// Exited is closed when qemu has exited (guest power-off, or a reboot
// without Config.Reboot, or PowerCut).
func (vm *VM) Exited() <-chan struct{} { return vm.exited }

// Wait waits for qemu to exit and returns how it exited.
func (vm *VM) Wait(ctx context.Context) error {
	select {
	case <-vm.exited:
		return vm.exitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PowerCut kills qemu at once (SIGKILL): the guest stops as if its power
// were cut. It returns when qemu is gone.
func (vm *VM) PowerCut() {
	if vm.cmd.Process != nil {
		vm.cmd.Process.Signal(syscall.SIGKILL)
	}
	select {
	case <-vm.exited:
	case <-time.After(30 * time.Second): // qemu does not outlive SIGKILL; a stuck pipe reader only
	}
	vm.mu.Lock()
	if vm.agent != nil {
		vm.agent.Close()
	}
	vm.mu.Unlock()
}

// Close cuts the power if qemu still runs and removes the VM's files (not
// Config.Disk).
func (vm *VM) Close() {
	vm.PowerCut()
	os.RemoveAll(vm.dir)
}
