package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/ros2/sros2"
)

// The secured Fast DDS client (testdata/fastdds/secure_client.cpp), built
// beside the interop client with the same generated type support.
var secureClient struct {
	once sync.Once
	bin  string
	err  error
}

func buildSecureClient(t *testing.T) string {
	t.Helper()
	gen := filepath.Dir(buildFastDDSClient(t))
	secureClient.once.Do(func() {
		src, _ := filepath.Abs(filepath.Join("testdata", "fastdds", "secure_client.cpp"))
		secureClient.bin = filepath.Join(gen, "secure_client")
		args := []string{"-std=c++11", "-O0", "-I", gen, "-o", secureClient.bin, src}
		for _, f := range []string{"geometry_msgs", "geometry_msgsPubSubTypes", "nav_msgs", "nav_msgsPubSubTypes",
			"std_msgs", "std_msgsPubSubTypes", "builtin_interfaces", "builtin_interfacesPubSubTypes"} {
			args = append(args, filepath.Join(gen, f+".cxx"))
		}
		args = append(args, "-lfastrtps", "-lfastcdr")
		if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
			secureClient.err = fmt.Errorf("g++: %v\n%s", err, out)
		}
	})
	if secureClient.err != nil {
		t.Fatal(secureClient.err)
	}
	if strings.Contains(string(mustRead(t, "/usr/lib/x86_64-linux-gnu/libfastrtps.so")), "DDS:Auth:PKI-DH") == false {
		t.Skip("this Fast DDS has no security plugins")
	}
	return secureClient.bin
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("Fast DDS library: %v", err)
	}
	return data
}

// securedProfile writes the loopback profile with DDS Security's
// participant properties for enclave e, as rmw_fastrtps_cpp sets them from
// ROS_SECURITY_KEYSTORE and the enclave (nil: the unsecured profile).
func securedProfile(t *testing.T, e *sros2.Enclave) string {
	t.Helper()
	base, err := filepath.Abs(filepath.Join("testdata", "fastdds", "loopback.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if e == nil {
		return base
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// Fast DDS takes file:// URIs (Cyclone DDS, file: and a path).
	var props strings.Builder
	props.WriteString("<rtps>\n        <propertiesPolicy><properties>\n")
	for _, p := range [][2]string{
		{"dds.sec.auth.plugin", "builtin.PKI-DH"},
		{"dds.sec.auth.builtin.PKI-DH.identity_ca", "file://" + e.IdentityCA},
		{"dds.sec.auth.builtin.PKI-DH.identity_certificate", "file://" + e.Cert},
		{"dds.sec.auth.builtin.PKI-DH.private_key", "file://" + e.Key},
		{"dds.sec.access.plugin", "builtin.Access-Permissions"},
		{"dds.sec.access.builtin.Access-Permissions.permissions_ca", "file://" + e.PermissionsCA},
		{"dds.sec.access.builtin.Access-Permissions.governance", "file://" + e.Governance},
		{"dds.sec.access.builtin.Access-Permissions.permissions", "file://" + e.Permissions},
		{"dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC"},
	} {
		fmt.Fprintf(&props, "          <property><name>%s</name><value>%s</value></property>\n", p[0], p[1])
	}
	props.WriteString("        </properties></propertiesPolicy>")
	doc := strings.Replace(string(data), "<rtps>", props.String(), 1)
	path := filepath.Join(t.TempDir(), "secured.xml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startSecureClient runs the secured Fast DDS client with profile.
func startSecureClient(t *testing.T, bin, profile string, domain uint32) *client {
	t.Helper()
	cmd := exec.Command(bin, profile, strconv.Itoa(int(domain)))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("the secured Fast DDS client did not exit")
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("secured Fast DDS client (%s) stderr:\n%s", profile, stderr.String())
		}
	})
	return &client{t: t, in: in, out: bufio.NewScanner(out)}
}

// TestFastDDSSecured runs saint-sim --ros2 with the bridge on DDS Security
// (--ros2-security, the /saint_bridge enclave of a keystore made here) and
// drives the tracks from a Fast DDS participant with the keystore's
// /workstation enclave: it matches and the odometry follows its Twist.
// Then peers that must not drive try for three seconds each at 1 m/s —
// one without security, one with an enclave of another keystore, one with
// this keystore's identity but permissions it signed with another CA, one
// whose permissions do not allow publishing cmd_vel — and the
// workstation's odometry shows the tracks did not move.
func TestFastDDSSecured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C++ client and runs the simulation")
	}
	bin := buildSecureClient(t)
	dir := buildBins(t)
	domain := loopbackDDS(t)

	ks := filepath.Join(t.TempDir(), "keystore")
	k, err := sros2.Create(ks)
	if err != nil {
		t.Fatal(err)
	}
	enclave := func(k *sros2.Keystore, name string, p sros2.Policy) *sros2.Enclave {
		if _, err := k.CreateEnclave(name, p); err != nil {
			t.Fatal(err)
		}
		e, err := sros2.OpenEnclave(k.Dir, name)
		if err != nil {
			t.Fatal(err)
		}
		return &e
	}
	enclave(k, bridgeEnclave, sros2.Policy{})
	workstation := enclave(k, "/workstation", sros2.Policy{})
	viewer := enclave(k, "/viewer", sros2.Policy{Publish: []string{}, Call: []string{}, Serve: []string{}})
	other, err := sros2.Create(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	stranger := enclave(other, "/workstation", sros2.Policy{})
	forged := enclave(k, "/forger", sros2.Policy{})
	od := enclave(other, "/forger", sros2.Policy{})
	forged.Permissions, forged.PermissionsCA, forged.Governance = od.Permissions, od.PermissionsCA, od.Governance

	proctest.Start(t, filepath.Join(dir, "saint-sim"), "--ros2", "--adopt", "--speed", "1",
		"--ros2-args", "--ros2-security "+ks,
		"--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"))

	ws := startSecureClient(t, bin, securedProfile(t, workstation), domain)
	start := time.Now()
	if got := ws.do("match 60"); len(got) != 1 || got[0] != "matched" {
		t.Fatalf("the permitted workstation: %v", got)
	}
	t.Logf("secured Fast DDS: matched the bridge after %.1f s", time.Since(start).Seconds())
	const speed = 0.3
	before := ws.do("drive 0 0.5")
	got := ws.do(fmt.Sprintf("drive %g 3", speed))
	if len(got) != 4 || got[0] != "odom" {
		t.Fatalf("drive: %v", got)
	}
	v, x := float(t, got[1]), float(t, got[2])
	t.Logf("secured Fast DDS: odometry %.3f m/s, moved %.2f m (%s samples)", v, x-float(t, before[2]), got[3])
	if v < speed*0.9 || v > speed*1.1 || x-float(t, before[2]) < 0.5 {
		t.Fatalf("the permitted workstation drove at %.1f m/s for 3 s: odometry %.3f m/s, moved %.2f m", speed, v, x-float(t, before[2]))
	}
	rest := ws.do("drive 0 2")

	for _, p := range []struct {
		name    string
		enclave *sros2.Enclave
	}{
		{"an unsecured peer", nil},
		{"a peer of another keystore", stranger},
		{"a peer with permissions signed by another CA", forged},
		{"a peer whose permissions do not allow publishing cmd_vel", viewer},
	} {
		c := startSecureClient(t, bin, securedProfile(t, p.enclave), domain)
		m := c.do("match 10")
		got := c.do("drive 1 3")
		t.Logf("%s: %v, %v", p.name, m, got)
		if len(m) != 1 || len(got) < 4 || got[0] != "odom" {
			t.Fatalf("%s: %v, %v", p.name, m, got)
		}
		if p.enclave == viewer {
			// Authenticated and allowed to read: it gets odometry, but its
			// own access control refuses the writer.
			if len(got) != 5 || got[4] != "nowriter" || got[3] == "0" {
				t.Errorf("%s: %v; want odometry and no cmd_vel writer", p.name, got)
			}
		} else if m[0] != "unmatched" || got[3] != "0" {
			t.Errorf("%s: %v, %v; want no match with the bridge and no odometry", p.name, m, got)
		}
		after := ws.do("drive 0 0.5")
		if len(after) < 4 {
			t.Fatalf("the workstation's odometry: %v", after)
		}
		if moved := float(t, after[2]) - float(t, rest[2]); moved > 0.02 || moved < -0.02 || float(t, after[1]) > 0.02 {
			t.Errorf("after %s drove at 1 m/s: the tracks moved %.3f m, odometry %s m/s", p.name, moved, after[1])
		}
		rest = after
	}
}
