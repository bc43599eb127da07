package bringup

import (
	"errors"
	"flag"
)

// RegisterFlags adds the bringup's launch parameters to fs: --robot-type,
// or its parts --model-type, --leg-type, --leg, --arm, --claw, --head and
// --waist. The function it returns, called after fs.Parse, gives the
// robot_type they name: "" when none was given; an error when both the
// whole and parts were, or parts without --model-type and --leg-type.
func RegisterFlags(fs *flag.FlagSet) func() (string, error) {
	robotType := fs.String("robot-type", "", "robot configuration robot_config/<robot_type>/ (e.g. saint-T-0L10A2G3H0W); or give its parts with --model-type, --leg-type, --leg, --arm, --claw, --head, --waist")
	var p Params
	fs.StringVar(&p.ModelType, "model-type", "", "robot_type part: model (pi_plus)")
	fs.StringVar(&p.LegType, "leg-type", "", "robot_type part: leg type (S)")
	fs.IntVar(&p.Leg, "leg", 0, "robot_type part: leg motors")
	fs.IntVar(&p.Arm, "arm", 0, "robot_type part: arm motors")
	fs.IntVar(&p.Claw, "claw", 0, "robot_type part: claw (gripper) motors")
	fs.IntVar(&p.Head, "head", 0, "robot_type part: head motors")
	fs.IntVar(&p.Waist, "waist", 0, "robot_type part: waist motors")
	return func() (string, error) {
		parts := false
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "model-type", "leg-type", "leg", "arm", "claw", "head", "waist":
				parts = true
			}
		})
		switch {
		case parts && *robotType != "":
			return "", errors.New("bringup: give --robot-type or its parts (--model-type …), not both")
		case parts && (p.ModelType == "" || p.LegType == ""):
			return "", errors.New("bringup: the robot_type's parts need --model-type and --leg-type")
		case parts:
			return p.RobotType(), nil
		}
		return *robotType, nil
	}
}
