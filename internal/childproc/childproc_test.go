//go:build linux

package childproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saint-os/saint/internal/childproc/childproctest"
)

// roleEnv makes the test binary play a part in a process tree instead of
// running the tests: see TestMain.
const roleEnv = "CHILDPROC_TEST_ROLE"

// dieWithin is how soon after its parent is killed a child must be gone.
const dieWithin = time.Second

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "":
		os.Exit(m.Run())
	case "parent":
		parent(true)
	case "plain-parent":
		parent(false)
	case "child":
		child(false)
	case "hanging-child":
		child(true)
	case "group-leader":
		groupLeader()
	default:
		fmt.Fprintln(os.Stderr, "unknown role", os.Getenv(roleEnv))
		os.Exit(2)
	}
}

// parent starts a child (with Start when bound, else with a plain
// exec.Command that only passes ParentEnv) from a goroutine locked to its
// thread, which then exits and takes that thread with it. It prints
// "child PID", waits for the thread to be gone, and prints whether the
// child still answers: "alive" or "dead". Then it waits to be killed.
func parent(bound bool) {
	// The main thread cannot end (the runtime wedges it instead): hold it
	// here so the goroutine below runs on another.
	runtime.LockOSThread()
	role := os.Getenv("CHILDPROC_TEST_CHILD")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	if !bound {
		cmd.Env = append(cmd.Env, ParentEnv+"="+strconv.Itoa(os.Getpid()))
	}
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	started := make(chan int)
	tid := make(chan int, 1)
	go func() {
		// A caller on a locked thread that ends with its goroutine: the
		// kernel would tell a child forked from this thread that its
		// parent died.
		runtime.LockOSThread()
		tid <- syscall.Gettid()
		if bound {
			if _, err := Start(cmd); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		} else if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		started <- cmd.Process.Pid
	}()
	fmt.Printf("child %d\n", <-started)
	gone := fmt.Sprintf("/proc/self/task/%d", <-tid)
	// A child process: there is no testing.T for a wait helper here.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(gone); err != nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "the locked thread did not end")
			os.Exit(2)
		}
	}
	out := bufio.NewReader(outPipe)
	if _, err := io.WriteString(in, "ping\n"); err != nil {
		fmt.Println("dead")
	} else if line, err := out.ReadString('\n'); err != nil || line != "pong\n" {
		fmt.Println("dead")
	} else {
		fmt.Println("alive")
	}
	sleepForever()
}

// child binds to its parent and answers each line on stdin with "pong"
// until the bound context ends. SIGTERM is left to its default action, so
// a parent-death signal ends it at once; hanging, it ignores SIGTERM and
// the bound context and is ended by Bind's exit grace only.
func child(hang bool) {
	if hang {
		signal.Ignore(syscall.SIGTERM)
	}
	ctx, stop, err := Bind(context.Background(), BindOptions{Poll: 10 * time.Millisecond, ExitGrace: 100 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	defer stop()
	go func() {
		r := bufio.NewScanner(os.Stdin)
		for r.Scan() {
			fmt.Println("pong")
		}
	}()
	<-ctx.Done()
	if hang {
		sleepForever()
	}
	os.Exit(4)
}

// groupLeader starts a grandchild in its own process group (a plain
// exec.Command inherits it), prints its pid and waits, ignoring SIGTERM.
func groupLeader() {
	signal.Ignore(syscall.SIGTERM)
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("grandchild %d\n", cmd.Process.Pid)
	sleepForever()
}

// sleepForever blocks without the runtime calling it a deadlock (as it
// would a bare select{} with nothing else to run).
func sleepForever() {
	for {
		// The child blocks until it is killed.
		time.Sleep(time.Hour)
	}
}

// startTree runs the test binary as a parent of role parentRole with a
// child of role childRole and returns the parent, the child, and the
// parent's report on the child after its forking thread ended.
func startTree(t *testing.T, parentRole, childRole string) (parent *exec.Cmd, child childproctest.Proc, report string) {
	t.Helper()
	parent = exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), roleEnv+"="+parentRole, "CHILDPROC_TEST_CHILD="+childRole)
	parent.Stderr = os.Stderr
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	var pid int
	if _, serr := fmt.Sscanf(line, "child %d", &pid); err != nil || serr != nil {
		t.Fatalf("parent: %q %v %v", line, err, serr)
	}
	child, ok := childproctest.Find(pid)
	if !ok {
		t.Fatalf("child %d not found", pid)
	}
	t.Cleanup(func() { _ = syscall.Kill(child.PID, syscall.SIGKILL) })
	report, err = r.ReadString('\n')
	if err != nil {
		t.Fatalf("parent's report: %v", err)
	}
	return parent, child, strings.TrimSpace(report)
}

// A child started with Start lives on when the thread its parent forked
// it from ends (only the process's end counts), and is gone within a
// second of its parent being killed.
func TestChildDiesWithItsKilledParentOnly(t *testing.T) {
	parent, child, report := startTree(t, "parent", "child")
	if report != "alive" {
		t.Fatalf("the child did not outlive the thread that started it: %s", report)
	}
	if !child.Running() {
		t.Fatal("the child is not running")
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	childproctest.WaitGone(t, dieWithin, child)
}

// A child that only has ParentEnv (no parent-death signal) notices through
// Bind that its parent is gone and ends.
func TestBoundChildNoticesItsParentGone(t *testing.T) {
	parent, child, report := startTree(t, "plain-parent", "child")
	if report != "alive" {
		t.Fatalf("the child: %s", report)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	childproctest.WaitGone(t, dieWithin, child)
}

// A child whose shutdown hangs after its parent went is ended by Bind's
// exit grace.
func TestHangingChildIsEndedAfterTheExitGrace(t *testing.T) {
	parent, child, report := startTree(t, "parent", "hanging-child")
	if report != "alive" {
		t.Fatalf("the child: %s", report)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// The exit grace (100 ms) plus the poll.
	childproctest.WaitGone(t, dieWithin, child)
}

// Stop reaches the child's whole process group: a grandchild goes too,
// and a child that ignores the stop signal is killed after the grace.
func TestStopEndsTheGroup(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=group-leader")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var gpid int
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "grandchild %d", &gpid); err != nil || serr != nil {
		t.Fatalf("child: %q %v %v", line, err, serr)
	}
	grandchild, ok := childproctest.Find(gpid)
	if !ok {
		t.Fatal("no grandchild")
	}
	t.Cleanup(func() { _ = syscall.Kill(gpid, syscall.SIGKILL) })
	err = p.Stop(syscall.SIGTERM, 100*time.Millisecond)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Stop = %v, want the child killed", err)
	}
	childproctest.WaitGone(t, dieWithin, grandchild)
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after the exit = %v, want os.ErrProcessDone", err)
	}
}

// Run stops the child when its context ends, with the signal asked for.
func TestRunStopsTheChildWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.Command("sleep", "1000")
	errc := make(chan error, 1)
	started := make(chan *Process, 1)
	go func() {
		errc <- Run(ctx, cmd, RunOptions{Signal: syscall.SIGINT, Started: func(p *Process) { started <- p }})
	}()
	p := <-started
	sleep, ok := childproctest.Find(p.Pid())
	if !ok || !sleep.Running() {
		t.Fatal("the child is not running")
	}
	cancel()
	err := <-errc
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("Run = %v, want the child ended by SIGINT", err)
	}
	if !strings.Contains(strings.Join(cmd.Env, "\n"), ParentEnv+"="+strconv.Itoa(os.Getpid())) {
		t.Errorf("the child's environment lacks %s", ParentEnv)
	}
}

// Bind refuses to run under a parent other than the one that started the
// process: its parent died between the fork and the child's start.
func TestBindRefusesAnotherParent(t *testing.T) {
	t.Setenv(ParentEnv, strconv.Itoa(os.Getpid())) // never this process's parent
	if _, _, err := Bind(context.Background(), BindOptions{}); !errors.Is(err, ErrParentGone) {
		t.Errorf("Bind = %v, want ErrParentGone", err)
	}
	t.Setenv(ParentEnv, "x")
	if _, _, err := Bind(context.Background(), BindOptions{}); err == nil || !strings.Contains(err.Error(), ParentEnv) {
		t.Errorf("Bind with a malformed %s = %v, want an error naming it", ParentEnv, err)
	}
}

// Without ParentEnv Bind watches nothing: a link that is down does not end
// the context.
func TestBindWithoutParentWatchesNothing(t *testing.T) {
	t.Setenv(ParentEnv, "")
	polled := make(chan struct{}, 1)
	ctx, stop, err := Bind(context.Background(), BindOptions{LinkGrace: time.Nanosecond, Poll: time.Millisecond,
		Link: func() bool { polled <- struct{}{}; return false }})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case <-polled:
		t.Error("the link was watched without a parent")
	default:
	}
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after stop = %v, want context.Canceled", context.Cause(ctx))
	}
}

// A bound process whose link to its parent's bus stays down past the
// grace has its context ended with ErrLinkLost.
func TestBindEndsOnALostLink(t *testing.T) {
	t.Setenv(ParentEnv, strconv.Itoa(os.Getppid()))
	ctx, stop, err := Bind(context.Background(), BindOptions{LinkGrace: 20 * time.Millisecond, Poll: time.Millisecond,
		Link: func() bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end")
	}
	if !errors.Is(context.Cause(ctx), ErrLinkLost) {
		t.Errorf("cause = %v, want ErrLinkLost", context.Cause(ctx))
	}
}

// The link's grace counts from when it went down, and starts again when it
// comes back.
func TestLinkWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := linkWatch{grace: 10 * time.Second}
	steps := []struct {
		at   time.Duration
		up   bool
		want bool
	}{
		{0, true, false},
		{1 * time.Second, false, false}, // down from here
		{11 * time.Second, false, false},
		{11*time.Second + 1, false, true},
		{12 * time.Second, true, false}, // back
		{13 * time.Second, false, false},
		{23 * time.Second, false, false},
		{24 * time.Second, false, true},
	}
	for _, s := range steps {
		if got := w.observe(t0.Add(s.at), s.up); got != s.want {
			t.Errorf("at %v up=%v: expired = %v, want %v", s.at, s.up, got, s.want)
		}
	}
}
