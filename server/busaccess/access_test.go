package busaccess_test

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus/natsbus"
	"github.com/saint-os/saint/server/busaccess"
)

// fakeClient is a connection as nats-server hands it to the
// authenticator.
type fakeClient struct {
	opts  natsserver.ClientOpts
	nonce []byte
	user  *natsserver.User
}

func (c *fakeClient) GetOpts() *natsserver.ClientOpts             { return &c.opts }
func (c *fakeClient) GetTLSConnectionState() *tls.ConnectionState { return nil }
func (c *fakeClient) RegisterUser(u *natsserver.User)             { c.user = u }
func (c *fakeClient) RemoteAddress() net.Addr                     { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (c *fakeClient) GetNonce() []byte                            { return c.nonce }
func (c *fakeClient) Kind() int                                   { return natsserver.CLIENT }
func (c *fakeClient) GetID() uint64                               { return 1 }

var _ natsserver.ClientAuthentication = (*fakeClient)(nil)

// node signs the nonce with a fresh key as node id.
func node(t *testing.T, id string, kp nkeys.KeyPair) *fakeClient {
	nonce := []byte("nonce-" + id)
	sig, err := kp.Sign(nonce)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	return &fakeClient{nonce: nonce, opts: natsserver.ClientOpts{Name: natsbus.NodeClientName(id), Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(sig)}}
}

// A device making up node ids cannot make the authenticator remember
// them without end; a known id with a new key still connects.
func TestUnadoptedNodesAreBounded(t *testing.T) {
	a, err := busaccess.New(busaccess.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for i := 0; i < 300; i++ {
		kp, _ := nkeys.CreateUser()
		if a.Check(node(t, fmt.Sprintf("n%d", i), kp)) {
			accepted++
		}
	}
	if accepted != 256 {
		t.Errorf("accepted %d unadopted nodes, want the 256 the limit allows", accepted)
	}
	kp, _ := nkeys.CreateUser()
	c := node(t, "n3", kp)
	if !a.Check(c) || c.user == nil || c.user.Permissions == nil {
		t.Fatal("a known unadopted id with a new key was refused, or got every permission")
	}
	if pub, _ := kp.PublicKey(); a.NodeKey("n3") != pub {
		t.Error("the new key is not the one shown for n3")
	}
}

// A damaged grants file does not stop the server: it is moved aside
// (named by the wall clock Options.Now gives) and nothing is granted.
func TestDamagedGrantsMovedAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nodes.json"), []byte(`[{"node_id": "head-1",`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	a, err := busaccess.New(busaccess.Options{Dir: dir, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatalf("New with a damaged grants file: %v", err)
	}
	if g, ok := a.Granted("head-1"); ok {
		t.Errorf("grant %+v from a damaged file", g)
	}
	if _, err := os.Stat(filepath.Join(dir, "nodes.json.corrupt-20260304T050607.000Z")); err != nil {
		t.Errorf("the damaged file was not kept aside: %v", err)
	}
}
