package linuxhost

import "golang.org/x/sys/unix"

// StatFS returns the size and the bytes available to unprivileged users of
// the filesystem holding path.
func StatFS(path string) (total, free uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	return st.Blocks * uint64(st.Bsize), st.Bavail * uint64(st.Bsize), nil
}
