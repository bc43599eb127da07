//go:build cgo

package mujoco

/*
#cgo LDFLAGS: -lmujoco
#include <stdlib.h>
#include <mujoco/mujoco.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

// Sim is one MuJoCo model and its data.
type Sim struct {
	m *C.mjModel
	d *C.mjData
}

// Load compiles an MJCF document (MuJoCo reads models from files, so it is
// written to a temporary one first).
func Load(mjcf string) (*Sim, error) {
	dir, err := os.MkdirTemp("", "saint-mujoco-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.xml")
	if err := os.WriteFile(path, []byte(mjcf), 0o600); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [1000]C.char
	m := C.mj_loadXML(cpath, nil, &msg[0], C.int(len(msg)))
	if m == nil {
		return nil, fmt.Errorf("mujoco: loading the model: %s", C.GoString(&msg[0]))
	}
	d := C.mj_makeData(m)
	if d == nil {
		C.mj_deleteModel(m)
		return nil, errors.New("mujoco: mj_makeData failed")
	}
	return &Sim{m: m, d: d}, nil
}

// Close frees the model and its data.
func (s *Sim) Close() {
	if s.d != nil {
		C.mj_deleteData(s.d)
		s.d = nil
	}
	if s.m != nil {
		C.mj_deleteModel(s.m)
		s.m = nil
	}
}

// Version returns the library's version (e.g. 222 for 2.2.2).
func Version() int { return int(C.mj_version()) }

// Nq, Nv and Nu are the model's numbers of positions, velocities and
// actuators.
func (s *Sim) Nq() int { return int(s.m.nq) }

// Nv returns the number of degrees of freedom.
func (s *Sim) Nv() int { return int(s.m.nv) }

// Nu returns the number of actuators.
func (s *Sim) Nu() int { return int(s.m.nu) }

// Timestep returns the model's step, s.
func (s *Sim) Timestep() float64 { return float64(s.m.opt.timestep) }

// Time returns the simulation time, s.
func (s *Sim) Time() float64 { return float64(s.d.time) }

func view(p *C.mjtNum, n C.int) []float64 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(p)), int(n))
}

// Qpos, Qvel, Ctrl and QfrcApplied are views of MuJoCo's arrays: reading
// and writing them reads and writes the simulation's state and inputs.
func (s *Sim) Qpos() []float64 { return view(s.d.qpos, s.m.nq) }

// Qvel returns the generalised velocities.
func (s *Sim) Qvel() []float64 { return view(s.d.qvel, s.m.nv) }

// Qacc returns the generalised accelerations of the last step.
func (s *Sim) Qacc() []float64 { return view(s.d.qacc, s.m.nv) }

// Ctrl returns the actuators' controls.
func (s *Sim) Ctrl() []float64 { return view(s.d.ctrl, s.m.nu) }

// QfrcBias returns the Coriolis, centrifugal and gravity forces of the
// last Forward or Step's state.
func (s *Sim) QfrcBias() []float64 { return view(s.d.qfrc_bias, s.m.nv) }

// QfrcApplied returns the generalised forces applied by the user.
func (s *Sim) QfrcApplied() []float64 { return view(s.d.qfrc_applied, s.m.nv) }

// XfrcApplied returns the Cartesian forces and torques (6 per body, world
// frame, at the body's centre of mass) applied by the user.
func (s *Sim) XfrcApplied() []float64 { return view(s.d.xfrc_applied, 6*s.m.nbody) }

// Xpos returns the bodies' positions, 3 per body, world frame.
func (s *Sim) Xpos() []float64 { return view(s.d.xpos, 3*s.m.nbody) }

// BodyID returns the id of the named body, or −1.
func (s *Sim) BodyID(name string) int {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	return int(C.mj_name2id(s.m, C.mjOBJ_BODY, c))
}

// Forward computes everything derived from the state (after setting qpos).
func (s *Sim) Forward() { C.mj_forward(s.m, s.d) }

// Step advances the simulation by one timestep.
func (s *Sim) Step() { C.mj_step(s.m, s.d) }

// HField returns a view of the named height field's samples (row-major,
// nrow × ncol, each 0 to 1 of the field's height), or nil.
func (s *Sim) HField(name string) []float32 {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	id := int(C.mj_name2id(s.m, C.mjOBJ_HFIELD, c))
	if id < 0 {
		return nil
	}
	adr := unsafe.Slice(s.m.hfield_adr, s.m.nhfield)[id]
	n := unsafe.Slice(s.m.hfield_nrow, s.m.nhfield)[id] * unsafe.Slice(s.m.hfield_ncol, s.m.nhfield)[id]
	return unsafe.Slice((*float32)(unsafe.Pointer(s.m.hfield_data)), int(s.m.nhfielddata))[adr : adr+n]
}
