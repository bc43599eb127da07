package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolespec"
)

// overrideRoleConfigs sets dotted paths in role configuration files
// (dir/<key>.yaml), keeping the rest of each file (and its comments).
// A path that does not exist yet is created as nested mappings.
func overrideRoleConfigs(dir string, overrides map[string]map[string]any) error {
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		file := filepath.Join(dir, key+".yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("role_config.%s: no role configuration %s", key, filepath.Base(file))
		}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		paths := make([]string, 0, len(overrides[key]))
		for p := range overrides[key] {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			var val yaml.Node
			if err := val.Encode(overrides[key][p]); err != nil {
				return fmt.Errorf("role_config.%s.%s: %w", key, p, err)
			}
			if err := setPath(root.Content[0], strings.Split(p, "."), &val); err != nil {
				return fmt.Errorf("role_config.%s.%s: %w", key, p, err)
			}
		}
		out, err := yaml.Marshal(&root)
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// setPath sets a mapping path to val, creating mappings on the way.
func setPath(n *yaml.Node, path []string, val *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s is not a mapping", n.Line, path[0])
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			n.Content[i+1] = val
			return nil
		}
		return setPath(n.Content[i+1], path[1:], val)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}
	if len(path) == 1 {
		n.Content = append(n.Content, key, val)
		return nil
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	n.Content = append(n.Content, key, child)
	return setPath(child, path[1:], val)
}

// validateRoleConfigs parses every role configuration in dir: those of
// the simulated robot's nodes (stack.Robot), which must be there, and any
// other whose name is a role key of the table ("limb_leg_left"); the
// errors name the file, line and field.
func validateRoleConfigs(dir string) error {
	keys := []string{}
	for _, n := range stack.Robot() {
		keys = append(keys, n.Key())
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		key := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if _, _, err := rolespec.ParseKey(key); err == nil && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	var errs []error
	for _, key := range keys {
		file := filepath.Join(dir, key+".yaml")
		data, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := roleconfig.ParseFile(file, data); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
