package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/server/adoption"
)

// declaredRoles are the role instances robot r declares, the only ones
// nodes are adopted into; nil, any role, without a robot type.
func declaredRoles(r *bringup.Robot) []adoption.RoleChoice {
	if r == nil {
		return nil
	}
	out := []adoption.RoleChoice{}
	for _, ri := range r.Roles() {
		out = append(out, adoption.RoleChoice{Key: ri.Key(), Role: ri.Role, Instance: ri.Instance})
	}
	return out
}

func robotType(r *bringup.Robot) string {
	if r == nil {
		return ""
	}
	return r.Type
}

// robotRoles returns the role configurations directory of a robot whose
// robot_param.yaml replaces some (role_configs): DataDir/robot_roles,
// rewritten at every start from the tree's roles/ and the replacements.
func robotRoles(roles, dataDir string, r *bringup.Robot) (string, error) {
	if dataDir == "" {
		return "", fmt.Errorf("server: robot %s replaces role configurations: Options.DataDir is required", r.Type)
	}
	dir := filepath.Join(dataDir, "robot_roles")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if roles != "" {
		entries, err := os.ReadDir(roles)
		if err != nil {
			return "", fmt.Errorf("server: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(roles, e.Name()))
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				return "", err
			}
		}
	}
	for key, data := range r.RoleConfigData {
		if err := os.WriteFile(filepath.Join(dir, key+".yaml"), data, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
