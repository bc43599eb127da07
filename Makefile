# SAINT.OS — the two commands are `make run` and `make test`.

GO        ?= go
BIN       := bin
VERSION   ?= 0.1.0
LDFLAGS   := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.7.0
GOBIN     := $(shell $(GO) env GOPATH)/bin

.PHONY: run test build vet staticcheck lint bench firmware clean

## run: the whole robot in simulation with the web UI on http://localhost:8000
run:
	$(GO) run ./cmd/saint-sim --data .saint-sim

## test: every test (unit, conformance, multi-process end to end), vet and staticcheck
test: vet staticcheck
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -race -timeout 20m ./hal/... ./bus/... ./node/... ./server/... ./sim/... ./roles/...

## build: the commands into bin/
build:
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

## bench: benchmarks (numbers are recorded in docs/performance.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## firmware: cross-compile a static saint-node for linux/arm64 and publish the firmware/ tree
## (VERSION=1.2.0 CHANGELOG="..." make firmware; the previous current version moves to firmware/archive/)
firmware:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/saint-node-linux-arm64 ./cmd/saint-node
	$(GO) run ./cmd/saintctl firmware publish --image $(BIN)/saint-node-linux-arm64 --version $(VERSION) \
		--check-arch arm64 --changelog "$(or $(CHANGELOG),saint-node $(VERSION))" \
		--configs fixtures/config/roles --out firmware
	@ls -l $(BIN)/saint-node-linux-arm64 | awk '{ printf "firmware image: %.1f MB (%d bytes)\n", $$5/1e6, $$5 }'

clean:
	rm -rf $(BIN) firmware .saint-sim
