# lpictl — build, test and run targets. `make help` lists them.
GO        ?= go
PREFIX    ?= /usr/local
DESTDIR   ?=
UNITDIR   ?= /etc/systemd/system
CONFDIR   ?= /etc/lpictl
BIN       := bin/lpictl
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION := v0.8.2
# Benchmarks: which packages and how long each runs.
BENCH_PKGS ?= ./...
BENCHTIME  ?= 1s

.PHONY: help build static-check test unit lint bench demo demo-predict generate install clean fuzz systemd-verify reproduce-fig1 reproduce-sweeps

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/lpictl (static: CGO_ENABLED=0, runs on any Linux of its architecture)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/lpictl

static-check: build ## fail if bin/lpictl is not a static binary
	@$(GO) version -m $(BIN) | grep -q 'CGO_ENABLED=0' || { echo "$(BIN) was built with cgo: build it with CGO_ENABLED=0 (make build)"; exit 1; }
	@if command -v readelf >/dev/null && LC_ALL=C readelf -lW $(BIN) | grep -q 'INTERP'; then \
	  echo "$(BIN) is dynamically linked (it has an ELF interpreter): build it with CGO_ENABLED=0 (make build)"; exit 1; fi
	@echo "$(BIN) is static"

test: lint systemd-verify static-check unit ## lint, every test (privileged ones run as root, skip otherwise), static binary, unit check

unit:
	$(GO) test -count=1 ./...

lint: ## gofmt check, go vet, staticcheck (pinned)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: ## benchmarks: ns/decision, allocs, events/s, peak memory
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(BENCH_PKGS)

fuzz: ## run every fuzz target for FUZZTIME each (default 20s)
	@./scripts/fuzz-all.sh $(or $(FUZZTIME),20s)

demo: build ## the main job on a built-in default: LAMMPS on a small Megafly under four policies
	./$(BIN) sim compare -c configs/sim/demo.yaml

demo-predict: build ## replay a captured idle-gap file through PerfBoundCorrect
	./$(BIN) predict --predictor perfboundcorrect configs/predict/gaps-demo.txt

reproduce-fig1: ## paper 000 Fig. 1 and §4.4–4.7 on the Megafly-4160 (about a minute; docs/reproducing.md)
	./scripts/reproduce-fig1.sh out/fig1

reproduce-sweeps: ## paper 000's fixed-t_PDT sweeps and PerfBound vs PerfBoundCorrect (about 15 minutes)
	./scripts/reproduce-sweeps.sh out/sweep

generate: ## regenerate bpf2go bindings (needs clang, llvm)
	$(GO) generate ./...

systemd-verify: build ## systemd-analyze verify on the unit and its drop-ins (installs systemd as root)
	./scripts/verify-systemd.sh $(abspath $(BIN))

install: build ## install binary, systemd unit, default config, dashboard (DESTDIR-friendly)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/lpictl
	install -d $(DESTDIR)$(UNITDIR)
	sed 's#^ExecStart=/usr/local/bin/lpictl#ExecStart=$(PREFIX)/bin/lpictl#' systemd/lpictl.service > $(DESTDIR)$(UNITDIR)/lpictl.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/lpictl.service
	test -e $(DESTDIR)$(CONFDIR)/agent.yaml || install -D -m 0644 configs/agent.yaml $(DESTDIR)$(CONFDIR)/agent.yaml
	install -D -m 0644 configs/grafana/lpictl.json $(DESTDIR)$(PREFIX)/share/lpictl/grafana/lpictl.json
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/lpictl/systemd systemd/lpictl.service.d/*.conf.example

clean:
	rm -rf bin out
