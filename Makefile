GO        ?= go
BIN       ?= bin/llmprobe
PKG       := github.com/llmprobe/llmprobe
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH    ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILDDATE ?= $(shell date -u +%Y%m%d-%H:%M:%S)
LDFLAGS   := -X github.com/prometheus/common/version.Version=$(VERSION) \
             -X github.com/prometheus/common/version.Revision=$(REVISION) \
             -X github.com/prometheus/common/version.Branch=$(BRANCH) \
             -X github.com/prometheus/common/version.BuildDate=$(BUILDDATE)
STATICCHECK_VERSION ?= v0.8.2

# nvml.h marks many calls deprecated; the warnings drown real build output.
export CGO_CFLAGS ?= -Wno-deprecated-declarations

.PHONY: all build image test deps lint run generate fmt-check vet staticcheck bench bench-rss bench-longctx calibrate live-llamacpp live-ollama

all: lint test build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/llmprobe

# The container image as an OCI image layout in bin/image, without a
# container engine: the Debian packages pinned in deploy/image/packages.lock
# (downloaded once into bin/image-cache), the binary, a non-root user
# (docs/image.md).
CREATED   ?= $(shell git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
image: build
	$(GO) run ./deploy/image -binary $(BIN) -out bin/image -cache bin/image-cache \
		-version $(VERSION) -revision $(REVISION) -created $(CREATED)

generate:
	$(GO) generate ./...

run:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/llmprobe

# One package at a time (-p 1): the measurement tests time real streams to a
# few milliseconds, and two cores shared with another package's Prometheus,
# Alertmanager and bursts make them miss.
test: deps fmt-check vet
	$(GO) test -race -count=1 -p 1 -timeout 30m ./...
	# The kustomize manifests, the Helm chart and the rollout templates, in a
	# module of their own so Helm's, Kubernetes', Argo Rollouts' and Flagger's
	# dependencies stay out of llmprobe's.
	cd deploy/kubernetes/test && $(GO) vet ./... && $(GO) test -count=1 ./...
	# Spans sent to a real OpenTelemetry Collector, built from the module
	# proxy in a module of its own for the same reason.
	cd tracing/otelcol && $(GO) vet ./... && $(GO) test -count=1 ./...

# What the tests need beyond Go (Chromium, Prometheus, Alertmanager,
# Pushgateway, systemd-analyze, gcc), installed with apt-get where missing.
deps:
	bash scripts/install-test-tools

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

lint: fmt-check vet staticcheck

# The Go benchmarks, then bench/scale: its table, and the goals of the cost
# issue as rows (CPU per request beside a bare net/http reader's, dispatch
# at 2,000 req/s, the pacer alone, heap per stream, the /metrics render,
# idle RSS). About 15 minutes on 2 cores.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./bench/scale -runs 3 -rss.bin $(BIN)

# The built daemon's resident memory on the demo config, a minute after it is
# ready (about 70 s).
bench-rss: build
	$(GO) run ./bench/rss -bin $(BIN)

# Every decision rule against sims whose true difference is known, the
# tables docs/decisions.md quotes (47 minutes on 2 cores): simulated
# days of the always-on judge on a virtual clock; the knee's interval
# across 20 seeds on the sim's engine loop, then the documented sweep for
# real with the same 20 seeds, ten side by side (about 15 minutes); compare
# and the regression gates, quiet and beside two busy loops.
calibrate: build
	$(GO) test -count=1 -run 'TestSimulatedDays$$' -v ./compare
	$(GO) test -count=1 -run 'TestKneeIntervalHoldsTheLongRunKnee$$' -v ./plan
	$(GO) run ./bench/calibrate -binary $(BIN) -mode knee -runs 20 -parallel 10 -busy 0
	$(GO) run ./bench/calibrate -binary $(BIN) -mode gates -conditions identical,8,40 -runs 5 -busy 0
	$(GO) run ./bench/calibrate -binary $(BIN) -mode gates -conditions identical,8,40 -runs 5 -busy 2
	$(GO) run ./bench/calibrate -binary $(BIN) -conditions identical,15,40 -runs 2 -busy 0
	$(GO) run ./bench/calibrate -binary $(BIN) -conditions identical,15,40 -runs 2 -busy 2

# llmprobe against a real llama.cpp server: chat, the Messages and the
# Responses APIs through a gate each and canaries (scripts/live-llamacpp; the
# server is built once into bin/llama.cpp-server, about 5 minutes).
live-llamacpp: build
	bash scripts/live-llamacpp

# Live checks against a real Ollama v0.24.0, built once from the Go module
# proxy into bin/ollama (about 15 minutes on 2 cores): its chat, Messages and
# Responses APIs through a gate each and canaries (scripts/live-ollama).
live-ollama: build
	bash scripts/live-ollama

# The gate's peak RSS sending 128k-token prompts, 10 at once, to the sim in a
# child process (about 20 s); docs/long-context.md quotes it.
bench-longctx: build
	$(GO) run ./bench/longctx -bin $(BIN)
