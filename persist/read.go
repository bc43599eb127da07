package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// ErrDamaged is the error of a state file that exists but holds no
// usable value: empty, `null`, truncated, garbled or followed by more
// data. Loaders treat every one of these alike (move the file aside,
// report it, fail safe): a `null` left by a bug or an editor is no more
// an empty state than a torn write is.
var ErrDamaged = errors.New("damaged state file")

// ReadJSON reads the JSON state file at path into v. A missing file is
// found false with no error, and v untouched. A file that is present but
// empty, `null`, truncated, garbled or followed by more data returns an
// error wrapping ErrDamaged that names the file; v may then hold part of
// the file and must not be used.
func ReadJSON(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("persist: %w", err)
	}
	if err := DecodeJSON(data, v); err != nil {
		return true, fmt.Errorf("persist: %s: %w", path, err)
	}
	return true, nil
}

// DecodeJSON is ReadJSON's decoding of data already read: it refuses
// what ReadJSON refuses, with an error wrapping ErrDamaged.
func DecodeJSON(data []byte, v any) error {
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0:
		return fmt.Errorf("%w: empty", ErrDamaged)
	case bytes.Equal(t, []byte("null")):
		return fmt.Errorf("%w: null", ErrDamaged)
	}
	// json.Unmarshal refuses a truncated document and anything after the
	// value.
	if err := json.Unmarshal(t, v); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return nil
}

// ReadYAML is ReadJSON for a YAML state file: a file that is empty, only
// comments, a null document (`null`, `~`), not a mapping or sequence, or
// does not decode into v is an error wrapping ErrDamaged.
func ReadYAML(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("persist: %w", err)
	}
	if err := DecodeYAML(data, v); err != nil {
		return true, fmt.Errorf("persist: %s: %w", path, err)
	}
	return true, nil
}

// DecodeYAML is ReadYAML's decoding of data already read.
func DecodeYAML(data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return fmt.Errorf("%w: empty", ErrDamaged)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode && root.Kind != yaml.SequenceNode {
		return fmt.Errorf("%w: want a mapping or a list, got %s", ErrDamaged, describeYAML(root))
	}
	if err := root.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return nil
}

func describeYAML(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("the scalar %.20q", n.Value)
	}
	if n.Kind == yaml.AliasNode {
		return "an alias"
	}
	return "nothing"
}
