package fielderr_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/saint-os/saint/internal/fielderr"
)

// An error names its field, or is its message alone; its cause is found
// through it, and the field through whatever wraps it.
func TestError(t *testing.T) {
	if got := fielderr.New("rc.channels[2].min", "want %d to %d, got %d", 800, 2200, 5).Error(); got != "rc.channels[2].min: want 800 to 2200, got 5" {
		t.Errorf("got %q", got)
	}
	if got := (&fielderr.Error{Message: "not YAML"}).Error(); got != "not YAML" {
		t.Errorf("without a field: %q", got)
	}
	err := fmt.Errorf("loading: %w", &fielderr.Error{Field: "frame", Message: "ends early", Err: io.ErrUnexpectedEOF})
	var fe *fielderr.Error
	if !errors.As(err, &fe) || fe.Field != "frame" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("through a wrapper: %v (field %+v)", err, fe)
	}
}

// Prefix puts the part's path in front of the field, an index without a
// dot; an error that names no field is left as it is.
func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix string
		err    error
		want   string
	}{
		{"route", fielderr.New("id", "required"), "route.id: required"},
		{"routes", fielderr.New("[2].id", "required"), "routes[2].id: required"},
		{"route", fielderr.New("", "want an object"), "route: want an object"},
		{"", fielderr.New("id", "required"), "id: required"},
		{"route", io.EOF, "EOF"},
	} {
		if got := fielderr.Prefix(c.prefix, c.err).Error(); got != c.want {
			t.Errorf("Prefix(%q, %v) = %q, want %q", c.prefix, c.err, got, c.want)
		}
	}
	cause := &fielderr.Error{Field: "x", Message: "bad", Err: io.ErrUnexpectedEOF}
	if err := fielderr.Prefix("p", cause); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the cause is lost: %v", err)
	}
}
