package auth

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenGeneratesStoresAndReloads(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := a.Token()
	if len(tok) != 2*tokenBytes {
		t.Fatalf("token %q: want %d hex characters", tok, 2*tokenBytes)
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Token() != tok {
		t.Errorf("reopened token %q, want the stored %q", b.Token(), tok)
	}
	if other, _ := Open(t.TempDir()); other.Token() == tok {
		t.Error("two data directories generated the same token")
	}
}

func TestValidAndRegenerate(t *testing.T) {
	a, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := a.Token()
	for _, bad := range []string{"", "x", old[:len(old)-1], old + "0"} {
		if a.Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
	if !a.Valid(old) {
		t.Fatal("current token not valid")
	}
	fresh, err := a.Regenerate()
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || a.Valid(old) || !a.Valid(fresh) {
		t.Errorf("after Regenerate: old valid=%v, new valid=%v", a.Valid(old), a.Valid(fresh))
	}
	b, _ := Open(filepath.Dir(a.Path()))
	if b.Token() != fresh {
		t.Error("regenerated token not stored")
	}
}

func TestOpenRejectsShortToken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("short\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("a 5-character token was accepted")
	}
}

func TestMiddleware(t *testing.T) {
	a, _ := Open(t.TempDir())
	required := true
	h := a.Middleware(func() bool { return required }, NewGuard(GuardOptions{}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("secret"))
	}))
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic " + a.Token(), http.StatusUnauthorized},
		{"Bearer " + a.Token(), http.StatusOK},
		{"bearer " + a.Token(), http.StatusOK},
	} {
		req := httptest.NewRequest("GET", "/api/logs", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.header, rec.Code, tc.want)
		}
		if rec.Code != http.StatusOK && rec.Body.String() == "secret" {
			t.Errorf("Authorization %q: body leaked", tc.header)
		}
	}
	required = false
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/logs", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("auth off: status %d, want 200", rec.Code)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8000": true,
		"localhost:0":    true,
		"[::1]:9090":     true,
		"127.0.0.2:1":    true,
		":8000":          false, // every interface
		"0.0.0.0:8000":   false,
		"192.0.2.1:80":   false,
		"[::]:80":        false,
		"127.0.0.1":      false, // no port: not a listen address
	} {
		if got := LoopbackOnly(addr); got != want {
			t.Errorf("LoopbackOnly(%q) = %v, want %v", addr, got, want)
		}
	}
}
