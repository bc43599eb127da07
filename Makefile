# SAINT.OS — the two commands are `make run` and `make test`.

GO        ?= go
BIN       := bin
VERSION   ?= 0.1.0
LDFLAGS   := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.7.0
GOBIN     := $(shell $(GO) env GOPATH)/bin

.PHONY: run test fuzz build vet staticcheck lint bench firmware clean viz-deps test-deps ros2-deps qemu-deps mujoco-deps shellcheck-deps rehearsal rehearsal-deps kernelcheck foxglove-screenshot ros2-snapshot

## run: the whole robot in simulation with the web UI on http://localhost:8000 and Foxglove on ws://localhost:8765
run: viz-deps
	$(GO) run ./cmd/saint-sim --data .saint-sim --livelink 127.0.0.1 --foxglove 127.0.0.1:8765

## test: every test (unit, conformance, multi-process end to end, every fuzz target on its seeds and
## committed corpus), vet and staticcheck, the deployment rehearsal in its VM (a phase of its own, so
## the emulated guest is not starved by the parallel package tests), then a short fuzzing run of the
## parsers of untrusted input. Each phase's wall time is printed at the end.
test: viz-deps test-deps ros2-deps qemu-deps mujoco-deps shellcheck-deps rehearsal-deps vet staticcheck
	@t0=$$(date +%s); \
	$(GO) test -count=1 -timeout 20m -skip '^TestRehearsal$$' ./... || exit 1; t1=$$(date +%s); \
	$(GO) test -count=1 -race -timeout 20m ./hal/... ./bus/... ./node/... ./server/... ./sim/... ./roles/... ./ros2/... || exit 1; t2=$$(date +%s); \
	$(MAKE) --no-print-directory rehearsal || exit 1; t3=$$(date +%s); \
	$(MAKE) --no-print-directory fuzz || exit 1; t4=$$(date +%s); \
	echo "make test phases: tests $$((t1-t0)) s, race $$((t2-t1)) s, rehearsal $$((t3-t2)) s, fuzz $$((t4-t3)) s"

## fuzz: each fuzz target of a parser that takes input from the network, a file or another process,
## mutating its seeds and committed corpus (testdata/fuzz) for FUZZTIME. A failure stops with the
## failing input written to the package's testdata/fuzz. Longer campaigns: FUZZTIME=2m make fuzz.
## The default is a count of executions (a few seconds for the slowest targets), not a duration:
## before Go 1.27 the fuzzing coordinator can report its own -fuzztime deadline as a failure
## ("context deadline exceeded", no failing input) when a worker is busy at that moment.
## (their lengths are recorded in docs/security.md).
FUZZTIME ?= 200x
FUZZ_TARGETS := server/mdns:FuzzAnswer roleconfig:FuzzParse server/router:FuzzParseConfig server/router:FuzzDecodeRoute \
	roles/head:FuzzCommand roles/arms:FuzzCommand roles/tracks:FuzzCmdVel roles/balance:FuzzCommand \
	server/firmware:FuzzUpload server/firmware:FuzzManifest server/firmware:FuzzCheckExecutable fwsign:FuzzParseAndVerify \
	server/adoption:FuzzRegistryFile server/settings:FuzzSettingsFile server/settings:FuzzPatch \
	server/inputs/livelink:FuzzSendersFile node:FuzzStoreFiles server:FuzzRequests server/foxglove:FuzzClientMessage \
	server/foxglove:FuzzParamMessage server/busaccess:FuzzGrantsFile server/busaccess:FuzzRejectedFile
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "fuzz: $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel 1 ./$$pkg || exit 1; \
	done

## viz-deps: the X11/GL headers the visualizer (ebiten, cgo) compiles against, and xvfb-run for its
## test; installed with apt-get when missing and run as root
VIZ_PACKAGES := libgl1-mesa-dev libxcursor-dev libxi-dev libxinerama-dev libxrandr-dev libxxf86vm-dev libasound2-dev pkg-config xvfb xauth
viz-deps:
	@if command -v pkg-config >/dev/null && pkg-config --exists gl x11 xcursor xi xinerama xrandr xxf86vm alsa \
		&& command -v xvfb-run >/dev/null && command -v xauth >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "viz-deps: installing $(VIZ_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(VIZ_PACKAGES) >/dev/null; \
	elif command -v pkg-config >/dev/null && pkg-config --exists gl x11 xcursor xi xinerama xrandr xxf86vm alsa; then \
		echo "viz-deps: xvfb-run or xauth missing (not root: not installing); the visualizer's screenshot test will skip. Install: sudo apt-get install xvfb xauth"; \
	else \
		echo "viz-deps: the visualizer needs X11/GL headers to compile (not root: not installing). Install: sudo apt-get install $(VIZ_PACKAGES)" >&2; exit 1; \
	fi

## test-deps: Node.js and npm (the tests with Foxglove's client libraries, which npm installs into a
## temporary directory) and zstd (which decompresses recordings for them); installed with apt-get when
## missing and run as root, otherwise those tests skip and say why
TEST_PACKAGES := nodejs npm zstd
test-deps:
	@if command -v node >/dev/null && command -v npm >/dev/null && command -v zstd >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "test-deps: installing $(TEST_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEST_PACKAGES) >/dev/null; \
	else \
		echo "test-deps: node, npm or zstd missing (not root: not installing); the Foxglove client-library tests will skip. Install: sudo apt-get install $(TEST_PACKAGES)"; \
	fi

## mujoco-deps: MuJoCo (libmujoco-dev), the reference simulator the physics models are checked against
## in sim/oracle/mujoco (cgo, tests only); installed with apt-get when missing and run as root
MUJOCO_PACKAGES := libmujoco-dev
mujoco-deps:
	@if [ -f /usr/include/mujoco/mujoco.h ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "mujoco-deps: installing $(MUJOCO_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(MUJOCO_PACKAGES) >/dev/null; \
	else \
		echo "mujoco-deps: the physics oracle tests need MuJoCo's headers and library (not root: not installing). Install: sudo apt-get install $(MUJOCO_PACKAGES)" >&2; exit 1; \
	fi

## ros2-deps: Eclipse Cyclone DDS (the ROS 2 bridge, saint-ros2, links it; idlc for go generate ./ros2)
## and Fast DDS with fastddsgen and a C++ compiler (the interop test's client), openssl (the SROS2
## keystore test checks its signatures with it) and urdfdom's check_urdf (the URDF models' test);
## installed with apt-get when missing and run as root
ROS2_PACKAGES := cyclonedds-dev cyclonedds-tools libfastrtps-dev fastddsgen fastdds-tools g++ openssl liburdfdom-tools
ros2-deps:
	@if [ -f /usr/include/dds/dds.h ] && command -v idlc >/dev/null && [ -d /usr/include/fastdds ] \
		&& command -v fastddsgen >/dev/null && command -v g++ >/dev/null && command -v openssl >/dev/null \
		&& command -v check_urdf >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "ros2-deps: installing $(ROS2_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(ROS2_PACKAGES) >/dev/null; \
	elif [ -f /usr/include/dds/dds.h ]; then \
		echo "ros2-deps: Fast DDS, fastddsgen, g++ or check_urdf missing (not root: not installing); the Fast DDS interop test and the URDF check will skip. Install: sudo apt-get install $(ROS2_PACKAGES)"; \
	else \
		echo "ros2-deps: the ROS 2 bridge needs Cyclone DDS to compile (not root: not installing). Install: sudo apt-get install $(ROS2_PACKAGES)" >&2; exit 1; \
	fi

## qemu-deps: qemu's user-mode arm64 emulator, with which cmd/e2e runs the linux/arm64 firmware image
## as a node; installed with apt-get when missing and run as root
qemu-deps:
	@if [ "$$(go env GOARCH)" = arm64 ] || command -v qemu-aarch64-static >/dev/null || command -v qemu-aarch64 >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "qemu-deps: installing qemu-user-static"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null; \
	else \
		echo "qemu-deps: qemu-user-static missing (not root: not installing); the arm64 firmware test will skip. Install: sudo apt-get install qemu-user-static"; \
	fi

## rehearsal-deps: QEMU's x86 system emulator, Debian's own amd64 kernel and a static busybox, with
## which the tests boot a real Linux kernel (internal/qemuvm; kernelcheck runs the real CAN, V4L2,
## serial and I²C backends against its simulated devices), and what the rehearsal's Debian 12 guest
## is built with and deployed over (mmdebstrap, mke2fs, cpio, ssh); installed with apt-get when
## missing and run as root, otherwise those tests skip and say why
REHEARSAL_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static mmdebstrap e2fsprogs cpio openssh-client
rehearsal-deps:
	@if [ "$$(go env GOARCH)" != amd64 ] || { command -v qemu-system-x86_64 >/dev/null \
		&& ls /boot/vmlinuz-*-amd64 >/dev/null 2>&1 && dpkg -s busybox-static >/dev/null 2>&1 \
		&& command -v mmdebstrap >/dev/null && command -v mke2fs >/dev/null && command -v cpio >/dev/null \
		&& command -v ssh >/dev/null; }; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "rehearsal-deps: installing $(REHEARSAL_PACKAGES)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(REHEARSAL_PACKAGES) >/dev/null; \
	else \
		echo "rehearsal-deps: one of $(REHEARSAL_PACKAGES) is missing (not root: not installing); the real-kernel tests and the rehearsal will skip. Install: sudo apt-get install $(REHEARSAL_PACKAGES)"; \
	fi

## kernelcheck: the real drivers against a real kernel: boots Debian's kernel under QEMU with vcan,
## vivid, i2c-stub and two serial ports fed RC frames, and runs cmd/internal/kernelcheck in it
## (docs/rehearsal.md lists the checks)
kernelcheck: rehearsal-deps
	$(GO) test -count=1 -run '^TestRealKernel$$' -v ./cmd/internal/kernelcheck/

## shellcheck-deps: shellcheck, with which deploy's TestScriptsPassShellcheck lints the deployment
## scripts; installed with apt-get when missing and run as root. A target of its own, not in
## test-deps: a machine whose Node.js comes from elsewhere (NodeSource's nodejs, which conflicts
## with Debian's npm) still gets it.
shellcheck-deps:
	@if command -v shellcheck >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "shellcheck-deps: installing shellcheck"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null; \
	else \
		echo "shellcheck-deps: shellcheck missing (not root: not installing); the deployment scripts' shellcheck test will skip. Install: sudo apt-get install shellcheck"; \
	fi

## rehearsal: the deployment rehearsed in a Debian 12 VM under QEMU (docs/rehearsal.md): the scripts install
## the server and a node over ssh, the node is adopted and updated with signed firmware, the power is cut
## mid-update, the watchdogs are tried; each phase's time is printed. make test runs it as a phase of its own.
## The guest image is cached in $XDG_CACHE_HOME/saint-rehearsal (~/.cache/saint-rehearsal), rebuilt when its recipe changes.
rehearsal: rehearsal-deps
	$(GO) test -count=1 -v -timeout 30m -run '^TestRehearsal$$' ./deploy/rehearsal/

## build: the commands into bin/
build: viz-deps ros2-deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...

staticcheck: $(GOBIN)/staticcheck-$(STATICCHECK_VERSION)
	$(GOBIN)/staticcheck-$(STATICCHECK_VERSION) ./...

$(GOBIN)/staticcheck-$(STATICCHECK_VERSION):
	GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	cp $(GOBIN)/staticcheck $@

lint: vet staticcheck

## ros2-snapshot: docs/ros2/model-from-tf.png — the reference robot drawn with gonum/plot from the
## /robot_description, /tf_static and /tf that saint-sim --ros2 publishes (cmd/saint-ros2 TestModelOverROS2);
## not rviz2, which Debian does not package
ros2-snapshot: ros2-deps
	SAINT_ROS2_SNAPSHOT=$(CURDIR)/docs/ros2/model-from-tf.png $(GO) test -count=1 -run 'TestModelOverROS2$$' ./cmd/saint-ros2/

## foxglove-screenshot: docs/screenshots/foxglove.png — Foxglove Studio's open-source web app (npm, installed
## into a temporary directory) in headless Chromium, connected to saint-sim --adopt with docs/foxglove/saint.json
## (docs/foxglove.md); needs the npm registry; not part of make test. Chromium is installed with apt-get when
## missing and run as root
foxglove-screenshot: test-deps
	@if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "foxglove-screenshot: installing chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	else \
		echo "foxglove-screenshot: needs Chromium (not root: not installing). Install: sudo apt-get install chromium" >&2; exit 1; \
	fi
	$(GO) run ./cmd/internal/foxglovescreenshot -out docs/screenshots/foxglove.png

## bench: benchmarks (numbers are recorded in docs/performance.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## firmware: cross-compile a static saint-node for linux/arm64 and publish the firmware/ tree
## (VERSION=1.2.0 CHANGELOG="..." make firmware; the previous current version moves to firmware/archive/).
## SIGN_KEY=path/to/saint-release.key (saintctl firmware keygen) signs the image and builds the key's
## public half into saint-node: those nodes then install only images that key signed.
## FIRMWARE_ARCH=amd64 builds it for nodes on PCs (the rehearsal VM, docs/rehearsal.md).
FIRMWARE_ARCH ?= arm64
firmware:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(FIRMWARE_ARCH) $(GO) build -trimpath \
		-ldflags '$(LDFLAGS) $(if $(SIGN_KEY),-X main.firmwareKey=$(shell $(GO) run ./cmd/saintctl firmware pubkey --key $(SIGN_KEY)))' \
		-o $(BIN)/saint-node-linux-$(FIRMWARE_ARCH) ./cmd/saint-node
	$(GO) run ./cmd/saintctl firmware publish --image $(BIN)/saint-node-linux-$(FIRMWARE_ARCH) --version $(VERSION) \
		--check-arch $(FIRMWARE_ARCH) --changelog "$(or $(CHANGELOG),saint-node $(VERSION))" \
		--configs fixtures/config/roles --out firmware $(if $(SIGN_KEY),--sign-key $(SIGN_KEY))
	@ls -l $(BIN)/saint-node-linux-$(FIRMWARE_ARCH) | awk '{ printf "firmware image: %.1f MB (%d bytes)\n", $$5/1e6, $$5 }'

clean:
	rm -rf $(BIN) firmware .saint-sim
