// Package rehearsal is the rehearsal of a real robot in a real Linux
// (docs/rehearsal.md): a Debian 12 virtual machine built from Debian's
// packages and booted with Debian's kernel under QEMU (internal/qemuvm), into
// which the deployment scripts install the server and a node exactly as
// docs/deploy.md says, over ssh. Its test, TestRehearsal (make rehearsal),
// then adopts the node, updates its firmware with a signed image, cuts the
// power in the middle of an update, and stalls the node and the kernel to
// see the watchdogs act.
//
// Image builds the guest's root file system image; everything else is the
// test.
package rehearsal
