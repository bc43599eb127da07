// Package selfupdate makes a real node replace its own binary: it is the
// node.Updater of saint-node, and the boot step that rolls back an image
// that did not come up healthy.
//
// The node's state directory holds the images (node.Store writes them):
//
//	firmware/current.img    the installed image, run by every start
//	firmware/previous.img   the image before it, kept for rollback
//	firmware/trial.yaml     present while current.img is on trial
//	firmware/rejected.img   the last image rolled back, kept for diagnosis
//
// The binary systemd starts (/usr/local/bin/saint-node, the one the node
// was flashed with) is a launcher as well as a node. Boot, called first
// thing, decides:
//
//   - a trial is open but this start was not the hand-over from Apply (the
//     trial image exited, crashed or was restarted before it proved
//     healthy): roll back — previous.img becomes current.img again, the
//     failed image is recorded as rejected so it is not installed again
//     unforced — then continue as below;
//   - current.img exists, matches its recorded sha256 and is not the
//     running binary: exec it;
//   - otherwise run on.
//
// Apply (after the node downloaded and verified an image) opens the trial
// and execs the new image with SAINT_FIRMWARE_TRIAL=<version> in its
// environment, so the new process knows it is the hand-over. Watch, on the
// node's executor, closes the trial once the node has been UNADOPTED or
// ACTIVE for HealthyAfter without a break; if that has not happened within
// TrialTimeout, the trial image rolls itself back and execs the previous
// one. An image that dies at once is rolled back by the next start, which
// systemd's Restart=on-failure provides.
//
// Exec, the environment and the clock are injected, so tests run the whole
// sequence in one process with a fake exec and a virtual executor.
package selfupdate
