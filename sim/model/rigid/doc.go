// Package rigid computes the dynamics of a serial chain of rigid bodies
// joined by hinges — the head's three axes, an arm's five joints:
//
//	M(q)·q̈ + C(q, q̇)·q̇ + g(q) = τ
//
// The joint-space mass matrix M, including each joint's armature (the
// reflected inertia of a servo's rotor and gearbox, which moves with the
// joint alone), comes from the composite-rigid-body algorithm (CRBA); the
// Coriolis, centrifugal and gravity terms C·q̇ + g from the recursive
// Newton–Euler algorithm (RNEA) with q̈ = 0 and gravity as an upward
// acceleration of the base (Featherstone, Rigid Body Dynamics Algorithms,
// 2008, chapters 5 and 6). Both run in world coordinates with spatial
// (6-D, angular first) vectors about the world origin, so a composite
// body's inertia is a plain sum. M is a gonum mat.SymDense and q̈ is solved
// by its Cholesky factorisation; the workspace is allocated once, so a
// step allocates nothing.
package rigid
