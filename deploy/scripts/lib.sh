# shellcheck shell=sh
# lib.sh: helpers shared by the deployment scripts (sourced, not run).
#
# SAINT_DRY_RUN=1 prints every command that would change something, local
# or remote, instead of running it: a way to read what a script will do,
# and how the scripts are tested.

# run runs its arguments as a command, or prints them in a dry run.
run() {
	if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
		printf 'run:'
		printf ' %s' "$@"
		printf '\n'
		return 0
	fi
	"$@"
}

# remote runs a shell command line on $TARGET over ssh (with sudo).
remote() {
	if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
		printf 'remote %s: %s\n' "$TARGET" "$*"
		return 0
	fi
	# The script goes over stdin, so it needs no quoting for the remote shell.
	# shellcheck disable=SC2086 # SSH_OPTS is a list of options
	printf '%s\n' "$*" | ssh $SSH_OPTS "$TARGET" sudo sh -e
}

# copy copies local files to a directory on $TARGET.
copy() {
	dest=$1
	shift
	if [ "${SAINT_DRY_RUN:-0}" = 1 ]; then
		printf 'copy %s -> %s:%s\n' "$*" "$TARGET" "$dest"
		return 0
	fi
	# shellcheck disable=SC2086 # SSH_OPTS is a list of options
	scp $SSH_OPTS "$@" "$TARGET:$dest"
}

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# repo_root is the checkout the scripts belong to.
repo_root() {
	cd "$(dirname "$0")/../.." && pwd
}
