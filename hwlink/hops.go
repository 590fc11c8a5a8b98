package hwlink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Hop counts feed PerfBound's hop factor l = bound × Σ p_i / h_i (docs/model.md
// §2.2). Hardware ports do not know how far their packets travel, so the
// numbers come from configuration: a default, per-port distributions and
// per-destination-prefix hop counts.
//
//	default: 1            # hops when nothing else matches (≥ 1)
//	ports:
//	  eth0: 4             # every packet of eth0 travels 4 hops
//	  swp1:               # or a distribution (shares are normalised)
//	    - {hops: 4, share: 0.7}
//	    - {hops: 6, share: 0.3}
//	prefixes:             # by destination, longest prefix wins
//	  10.1.0.0/16: 2
//	  2001:db8::/32: 5

// HopShare is a fraction of a port's packets travelling Hops hops.
type HopShare struct {
	Hops  int     `yaml:"hops" json:"hops"`
	Share float64 `yaml:"share" json:"share"`
}

// HopConfig is the configuration form (YAML or built in code).
type HopConfig struct {
	Default  int                 `yaml:"default"`
	Ports    map[string]HopEntry `yaml:"ports"`
	Prefixes map[string]int      `yaml:"prefixes"`
}

// HopEntry is a port's hops: a single count or a distribution.
type HopEntry []HopShare

// UnmarshalYAML accepts an integer or a list of {hops, share}.
func (e *HopEntry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var h int
		if err := n.Decode(&h); err != nil {
			return fmt.Errorf("line %d: hop count: %w", n.Line, err)
		}
		*e = HopEntry{{Hops: h, Share: 1}}
		return nil
	}
	var list []HopShare
	if err := n.Decode(&list); err != nil {
		return fmt.Errorf("line %d: hop distribution: %w", n.Line, err)
	}
	*e = list
	return nil
}

// maxHops bounds configured hop counts (no network has more).
const maxHops = 1024

// HopTable answers hop-count questions. Immutable once built.
type HopTable struct {
	def      int
	ports    map[string][]HopShare
	prefixes []hopPrefix // longest first
}

type hopPrefix struct {
	p    netip.Prefix
	hops int
}

// ParseHopConfig reads the YAML form. Unknown keys are errors.
func ParseHopConfig(data []byte) (*HopTable, error) {
	var cfg HopConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("hop config: %w", err)
	}
	return NewHopTable(cfg)
}

// NewHopTable validates cfg: hops in 1..1024, shares positive and finite
// (normalised to sum 1), prefixes valid. Default 0 means 1.
func NewHopTable(cfg HopConfig) (*HopTable, error) {
	t := &HopTable{def: cfg.Default, ports: make(map[string][]HopShare, len(cfg.Ports))}
	if t.def == 0 {
		t.def = 1
	}
	if t.def < 1 || t.def > maxHops {
		return nil, fmt.Errorf("hop config: default %d outside 1..%d", cfg.Default, maxHops)
	}
	for port, entry := range cfg.Ports {
		if port == "" {
			return nil, errors.New("hop config: ports: empty port name")
		}
		if len(entry) == 0 {
			return nil, fmt.Errorf("hop config: ports.%s: empty distribution", port)
		}
		var sum float64
		for _, s := range entry {
			if s.Hops < 1 || s.Hops > maxHops {
				return nil, fmt.Errorf("hop config: ports.%s: hops %d outside 1..%d", port, s.Hops, maxHops)
			}
			if !(s.Share > 0) || math.IsInf(s.Share, 0) {
				return nil, fmt.Errorf("hop config: ports.%s: share %v must be positive", port, s.Share)
			}
			sum += s.Share
		}
		if math.IsInf(sum, 0) {
			return nil, fmt.Errorf("hop config: ports.%s: shares overflow", port)
		}
		norm := make([]HopShare, len(entry))
		for i, s := range entry {
			norm[i] = HopShare{Hops: s.Hops, Share: s.Share / sum}
		}
		t.ports[port] = norm
	}
	for ps, hops := range cfg.Prefixes {
		p, err := netip.ParsePrefix(ps)
		if err != nil {
			return nil, fmt.Errorf("hop config: prefixes: %w", err)
		}
		if hops < 1 || hops > maxHops {
			return nil, fmt.Errorf("hop config: prefixes.%s: hops %d outside 1..%d", ps, hops, maxHops)
		}
		t.prefixes = append(t.prefixes, hopPrefix{p: p.Masked(), hops: hops})
	}
	slices.SortFunc(t.prefixes, func(a, b hopPrefix) int {
		if a.p.Bits() != b.p.Bits() {
			return b.p.Bits() - a.p.Bits()
		}
		return a.p.Addr().Compare(b.p.Addr())
	})
	return t, nil
}

// Default returns the default hop count.
func (t *HopTable) Default() int { return t.def }

// Port returns the hop distribution of a port's packets: the configured
// one, or all packets at the default. The slice must not be modified.
func (t *HopTable) Port(name string) []HopShare {
	if d, ok := t.ports[name]; ok {
		return d
	}
	return []HopShare{{Hops: t.def, Share: 1}}
}

// Destination returns the hop count towards addr: the longest matching
// prefix, or the default.
func (t *HopTable) Destination(addr netip.Addr) int {
	addr = addr.Unmap()
	for _, p := range t.prefixes {
		if p.p.Contains(addr) {
			return p.hops
		}
	}
	return t.def
}

// HopFactor returns Σ p_i / h_i for a port's distribution; PerfBound's
// l is bound × HopFactor (docs/model.md §2.2: 70 % at 4 and 30 % at 6 → 0.225).
func HopFactor(d []HopShare) float64 {
	var f float64
	for _, s := range d {
		if s.Hops > 0 {
			f += s.Share / float64(s.Hops)
		}
	}
	return f
}
