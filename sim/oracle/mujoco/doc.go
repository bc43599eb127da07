// Package mujoco is a test oracle: a small cgo binding to MuJoCo (Debian's
// libmujoco-dev, 2.2.2) and the tests that run each simulator model beside
// the same model in MuJoCo, built from the MJCF the Go model writes from its
// own parameters, and compare the trajectories.
//
// Only this package's tests use it; no other code imports it, so the
// simulator, the node firmware (built with CGO_ENABLED=0) and everything
// else stay free of cgo. Without cgo the binding is not compiled and the
// oracle tests do not run.
//
// The oracle integrates the rigid-body dynamics (mass matrix, Coriolis and
// gravity terms, rotor inertia as MuJoCo's armature) with its RK4
// integrator at a finer step than the Go models; what is not rigid-body
// physics — a servo's drive law, friction laws — is computed by the same Go
// code on both sides and applied to MuJoCo as generalised forces
// (qfrc_applied), so a difference in the trajectories is a difference in the
// mechanics or the integration. The floor's forces on the balancing base's
// wheels and on the tracked base's tracks are MuJoCo's own contacts, which
// hold the Go models' contact and friction laws to MuJoCo's.
package mujoco
