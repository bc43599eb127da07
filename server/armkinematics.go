package server

import (
	"fmt"
	"sync"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/kinematics"
	"github.com/saint-os/saint/roles/motor"
	"gopkg.in/yaml.v3"
)

// RoleConfigs is where armKinematics reads the arms' role configurations:
// the firmware repository the nodes get theirs from.
type RoleConfigs interface {
	RoleConfig(role, instance string) (data []byte, version, checksum string, err error)
}

// armKinematics gives the router each arm's kinematics from its role
// configuration (arms_left.yaml, arms_right.yaml): the geometry of
// kinematics.DefaultArm with the joint table's limits (motor.lower,
// motor.upper), or an error when the table says supports_kinematics:
// false. A configuration is parsed once per checksum, so a new one (a
// firmware or configuration update) is read at the next use. Safe for
// concurrent use (router.Options.Arms).
type armKinematics struct {
	configs RoleConfigs

	mu    sync.Mutex
	cache map[string]armEntry // by side
}

type armEntry struct {
	checksum string
	arm      kinematics.Arm
	err      error
}

func newArmKinematics(c RoleConfigs) *armKinematics {
	return &armKinematics{configs: c, cache: map[string]armEntry{}}
}

// Arm returns side's kinematics, or why it has none.
func (k *armKinematics) Arm(side string) (kinematics.Arm, error) {
	key := msg.RoleKey(msg.RoleArms, side)
	data, _, sum, err := k.configs.RoleConfig(msg.RoleArms, side)
	if err != nil {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: %w", side, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.cache[side]; ok && e.checksum == sum {
		return e.arm, e.err
	}
	arm, err := parseArmKinematics(side, key, data)
	k.cache[side] = armEntry{checksum: sum, arm: arm, err: err}
	return arm, err
}

// parseArmKinematics reads an arms role configuration's joint table.
func parseArmKinematics(side, key string, data []byte) (kinematics.Arm, error) {
	var doc struct {
		Motor yaml.Node `yaml:"motor"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: configuration %s: %v", side, key, err)
	}
	if doc.Motor.Kind == 0 {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: configuration %s has no joint table (motor)", side, key)
	}
	j, err := motor.JointsFromNode(&doc.Motor)
	if err != nil {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: configuration %s: motor: %v", side, key, err)
	}
	if !j.SupportsKinematics {
		return kinematics.Arm{}, fmt.Errorf("the %s arm does not support kinematics: its configuration %s says motor.supports_kinematics: false", side, key)
	}
	if len(j.JointNames) != kinematics.NumJoints {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: configuration %s: motor.joint_names has %d joints, the arms' kinematics %d",
			side, key, len(j.JointNames), kinematics.NumJoints)
	}
	arm, err := kinematics.DefaultArm(side).WithLimits(j.Lower, j.Upper)
	if err != nil {
		return kinematics.Arm{}, fmt.Errorf("the %s arm has no kinematics: configuration %s: motor: %v", side, key, err)
	}
	return arm, nil
}
