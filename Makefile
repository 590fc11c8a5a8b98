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
# Benchmarks: which packages and how long each runs; HTSIM: htsim's directory for bench-htsim.
BENCH_PKGS ?= ./...
BENCHTIME  ?= 1s
HTSIM      ?=
# Debian package (make deb): version from git describe, sanitised; Go's arch name (nfpm maps it).
DEB_VERSION    ?= $(shell ./packaging/version.sh)
DEB_ARCH       ?= $(shell $(GO) env GOARCH)
DEB_MAINTAINER ?= The lpictl Authors <lpictl@users.noreply.github.com>
DEB_DATE       ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
DEB_OUT        := out/deb
DEB_STAGE      := $(DEB_OUT)/stage

.PHONY: help build static-check test unit lint bench bench-htsim pgo demo demo-predict generate install clean fuzz systemd-verify reproduce-fig1 reproduce-sweeps
.PHONY: uninstall deb deb-check
.PHONY: promtool-check slurm-check simgrid-check figures

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/lpictl (static: CGO_ENABLED=0, runs on any Linux of its architecture)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/lpictl

static-check: build ## fail if bin/lpictl is not a static binary
	@$(GO) version -m $(BIN) | grep -q 'CGO_ENABLED=0' || { echo "$(BIN) was built with cgo: build it with CGO_ENABLED=0 (make build)"; exit 1; }
	@if command -v readelf >/dev/null && LC_ALL=C readelf -lW $(BIN) | grep -q 'INTERP'; then \
	  echo "$(BIN) is dynamically linked (it has an ELF interpreter): build it with CGO_ENABLED=0 (make build)"; exit 1; fi
	@echo "$(BIN) is static"

test: lint systemd-verify promtool-check static-check deb-check slurm-check simgrid-check unit ## lint, every test (privileged ones run as root, skip otherwise), static binary, unit check

# One package at a time: the privileged tests of hwlink and cmd/lpictl measure µs-scale delays
# of emulated EEE ports, and one package's spinning emulator would delay another's probes.
unit:
	$(GO) test -count=1 -p 1 ./...
	$(GO) test -race -count=1 -short -run '$(RACE_TESTS)' ./sim/engine/ ./sim/network/ ./sim/scenario/

# The parallel engine's tests under the race detector (docs/simulator.md "Parallel runs").
RACE_TESTS := TestParallelMatchesSequential|TestParallelCrossingChecked|TestParallelRandomNetworks|TestParallelBlockers|TestDeadlockReportedParallel|TestParallelInterrupted|TestParallelFallsBack

lint: ## gofmt check, go mod tidy check, go vet, staticcheck (pinned)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@(cd tools/nfpm && $(GO) mod tidy -diff) || { echo "tools/nfpm/go.mod is not tidy: run go mod tidy in tools/nfpm"; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: ## benchmarks (ns/decision, allocs, events/s, peak memory), then a summary; with HTSIM=DIR also bench-htsim
	GO='$(GO)' ./scripts/bench.sh '$(BENCHTIME)' $(BENCH_PKGS)
	@if [ -n '$(HTSIM)' ]; then $(MAKE) --no-print-directory bench-htsim HTSIM='$(HTSIM)'; fi

bench-threads: build ## the Megafly-4160 and LAMMPS on 1 and THREADS (default 2) goroutines, alternately: wall times, ratio, identical outputs
	@THREADS='$(THREADS)' ROUNDS='$(ROUNDS)' LAMMPS_STEPS='$(LAMMPS_STEPS)' BIN=./$(BIN) ./scripts/bench-threads.sh

bench-vs: ## a benchmark's events/s against an older commit, both at once on two cores, or in turn on one with ALTERNATE=1 (REV=fa0fa16, BENCH='Megafly4160/heap$$', ROUNDS=6)
	@REV='$(REV)' BENCH='$(BENCH)' ROUNDS='$(ROUNDS)' ALTERNATE='$(ALTERNATE)' GO='$(GO)' ./scripts/bench-vs.sh

bench-htsim: ## lpictl against htsim on the same permutation, alternately, one core (HTSIM=DIR: htsim's binaries or source; skips without)
	@if [ -n '$(HTSIM)' ]; then $(MAKE) --no-print-directory build; fi
	@HTSIM='$(HTSIM)' ./scripts/bench-htsim.sh

pgo: ## profile lpictl on shipped scenarios into cmd/lpictl/default.pgo, the profile every build is optimised with (about a minute)
	GO='$(GO)' ./scripts/pgo.sh

fuzz: ## run every fuzz target for FUZZTIME each (default 20s)
	@./scripts/fuzz-all.sh $(or $(FUZZTIME),20s)

demo: build ## the main job on a built-in default: LAMMPS on a small Megafly under four policies
	./$(BIN) sim compare -c configs/sim/demo.yaml

demo-predict: build ## replay a captured idle-gap file through PerfBoundCorrect
	./$(BIN) predict --predictor perfboundcorrect configs/predict/gaps-demo.txt

reproduce-fig1: ## paper 000 Fig. 1 and §4.4–4.7 on the Megafly-4160 (about 15 minutes on 2 cores: LAMMPS dominates; docs/reproducing.md)
	./scripts/reproduce-fig1.sh out/fig1

reproduce-sweeps: ## paper 000's fixed-t_PDT sweeps and PerfBound vs PerfBoundCorrect (about 15 minutes)
	./scripts/reproduce-sweeps.sh out/sweep

generate: ## regenerate bpf2go bindings (needs clang, llvm)
	$(GO) generate ./...

systemd-verify: build ## systemd-analyze verify on the unit and its drop-ins (installs systemd as root)
	./scripts/verify-systemd.sh $(abspath $(BIN))

slurm-check: build ## lpictl sweep submit --slurm on a throw-away local Slurm (root: installs slurm, munge; skips otherwise)
	./scripts/test-slurm.sh $(abspath $(BIN))

simgrid-check: build ## SimGrid TI traces of scripts/simgrid/*.c through lpictl workload describe and sim run (root: installs libsimgrid-dev; skips otherwise)
	./scripts/test-simgrid.sh $(abspath $(BIN))

figures: build ## run the figure sweeps (configs/sweeps/fig*.yaml) and write docs/figures/*.png (FULL=1: the paper's scale)
	./scripts/figures.sh out/figures

promtool-check: build ## promtool check/test the alert rules, lint a simulator agent's scrape (installs promtool as root)
	./scripts/test-promtool.sh $(abspath $(BIN))

install: build ## install binary, systemd unit, default config, dashboard (DESTDIR-friendly)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/lpictl
	install -d $(DESTDIR)$(UNITDIR)
	sed 's#^ExecStart=/usr/local/bin/lpictl#ExecStart=$(PREFIX)/bin/lpictl#' systemd/lpictl.service > $(DESTDIR)$(UNITDIR)/lpictl.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/lpictl.service
	test -e $(DESTDIR)$(CONFDIR)/agent.yaml || install -D -m 0644 configs/agent.yaml $(DESTDIR)$(CONFDIR)/agent.yaml
	install -D -m 0644 configs/grafana/lpictl.json $(DESTDIR)$(PREFIX)/share/lpictl/grafana/lpictl.json
	install -D -m 0644 configs/prometheus/lpictl-alerts.yaml $(DESTDIR)$(PREFIX)/share/lpictl/prometheus/lpictl-alerts.yaml
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/lpictl/systemd systemd/lpictl.service.d/*.conf.example

uninstall: ## remove what `make install` put there (same PREFIX, DESTDIR, UNITDIR, CONFDIR); keeps an edited agent.yaml
	rm -f $(DESTDIR)$(PREFIX)/bin/lpictl $(DESTDIR)$(UNITDIR)/lpictl.service
	rm -f $(DESTDIR)$(PREFIX)/share/lpictl/grafana/lpictl.json
	rm -f $(DESTDIR)$(PREFIX)/share/lpictl/prometheus/lpictl-alerts.yaml
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/doc/lpictl/systemd/,$(notdir $(wildcard systemd/lpictl.service.d/*.conf.example)))
	@for d in share/lpictl/grafana share/lpictl/prometheus share/lpictl share/doc/lpictl/systemd share/doc/lpictl; do \
	  rmdir $(DESTDIR)$(PREFIX)/$$d 2>/dev/null || true; done
	@if cmp -s configs/agent.yaml $(DESTDIR)$(CONFDIR)/agent.yaml; then \
	  rm -f $(DESTDIR)$(CONFDIR)/agent.yaml; rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(CONFDIR)/agent.yaml ]; then \
	  echo "kept $(DESTDIR)$(CONFDIR)/agent.yaml (edited): remove it by hand"; fi

deb: build ## Debian package in out/deb/ (nfpm as a Go tool): binary, unit, conffile, man pages, completions
	rm -rf $(DEB_STAGE) $(DEB_OUT)/*.deb
	mkdir -p $(DEB_STAGE)/man $(DEB_STAGE)/completions
	sed 's#^ExecStart=/usr/local/bin/lpictl#ExecStart=/usr/bin/lpictl#' systemd/lpictl.service > $(DEB_STAGE)/lpictl.service
	SOURCE_DATE_EPOCH=$(DEB_DATE) ./$(BIN) gen-man $(DEB_STAGE)/man
	gzip -9n $(DEB_STAGE)/man/*.1
	./$(BIN) completion bash > $(DEB_STAGE)/completions/lpictl
	./$(BIN) completion zsh > $(DEB_STAGE)/completions/_lpictl
	./$(BIN) completion fish > $(DEB_STAGE)/completions/lpictl.fish
	printf 'lpictl (%s) unstable; urgency=medium\n\n  * Built from git %s.\n\n -- %s  %s\n' \
	  '$(DEB_VERSION)' '$(VERSION)' '$(DEB_MAINTAINER)' "$$(LC_ALL=C date -u -R -d @$(DEB_DATE))" \
	  | gzip -9n > $(DEB_STAGE)/changelog.gz
	DEB_VERSION='$(DEB_VERSION)' DEB_ARCH='$(DEB_ARCH)' DEB_MAINTAINER='$(DEB_MAINTAINER)' \
	  SOURCE_DATE_EPOCH=$(DEB_DATE) \
	  $(GO) tool -modfile=tools/nfpm/go.mod nfpm package --config packaging/nfpm.yaml --packager deb --target $(DEB_OUT)/

deb-check: ## as root: build the .deb, dpkg-deb and lintian it, install, verify, purge (skips otherwise)
	./scripts/test-deb.sh

clean:
	rm -rf bin out
