package traces

import (
	"errors"
	"fmt"
	"os"

	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/sched"
	"github.com/lpictl/lpictl/sim/workload/ti"
)

func init() {
	workload.RegisterProgramKind(workload.KindTI, load)
	workload.RegisterProgramKind(workload.KindGOAL, load)
}

// Load reads cfg.File as a trace of kind cfg.Kind (ti or goal) into a
// schedule. Errors name FILE:LINE, or the key as prefix.<key>.
func Load(cfg workload.Config, prefix string) (*sched.Schedule, error) {
	switch cfg.Kind {
	case workload.KindTI:
		rate := cfg.FlopRate
		if rate == 0 {
			rate = workload.DefaultFlopRate
		}
		if _, err := os.Stat(cfg.File); err != nil {
			return nil, fmt.Errorf("%s.file: %w", prefix, err)
		}
		return ti.ReadIndex(cfg.File, ti.Options{FlopRate: rate})
	case workload.KindGOAL:
		f, err := os.Open(cfg.File)
		if err != nil {
			return nil, fmt.Errorf("%s.file: %w", prefix, err)
		}
		defer f.Close()
		return sched.ParseGOAL(f, cfg.File)
	}
	return nil, fmt.Errorf("%s.kind: %q is not a program trace (ti or goal)", prefix, cfg.Kind)
}

// Program is a loaded trace: its schedule and the executor's options.
type Program struct {
	s     *sched.Schedule
	eager int64
}

var _ workload.Program = (*Program)(nil)

func load(cfg workload.Config, prefix string) (workload.Program, error) {
	s, err := Load(cfg, prefix)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p := &Program{s: s, eager: workload.DefaultEagerThreshold}
	if e := cfg.EagerThreshold; e != nil {
		p.eager = *e
	}
	// Replay it once on a contention-free host, one rank per node: a
	// program that deadlocks fails now, naming the stuck rank and
	// operation, not in the middle of a simulation.
	d, err := p.NewDriver(identity(len(s.Ranks)), workload.DefaultIntraLatency, workload.DefaultIntraBandwidth)
	if err != nil {
		return nil, err
	}
	if err := workload.NewIdealHost().Run(d); err != nil {
		return nil, err
	}
	return p, nil
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// Schedule returns the program's schedule.
func (p *Program) Schedule() *sched.Schedule { return p.s }

// Ranks implements workload.Program.
func (p *Program) Ranks() int { return len(p.s.Ranks) }

// NewDriver implements workload.Program: the schedule's executor.
func (p *Program) NewDriver(nodes []int, intraLatency int64, intraBandwidth float64) (workload.Driver, error) {
	if len(nodes) != len(p.s.Ranks) {
		return nil, errors.New("traces: one node per rank")
	}
	e, err := sched.NewExecutor(p.s, sched.Options{Nodes: nodes, EagerThreshold: p.eager,
		IntraLatency: intraLatency, IntraBandwidth: intraBandwidth})
	if err != nil {
		return nil, err
	}
	return &driver{Executor: e}, nil
}

// driver is the executor as a workload.Driver, with the per-rank counters
// in its Stats.
type driver struct{ *sched.Executor }

// Close implements workload.Driver: a schedule holds no open input.
func (d *driver) Close() error { return nil }

// Stats implements workload.Driver.
func (d *driver) Stats() workload.Stats {
	s := d.Executor.Stats()
	rs := d.RankStats()
	n := len(rs)
	s.RankSends, s.RankRecvs = make([]int64, n), make([]int64, n)
	s.RankBytesSent, s.RankBytesRecv = make([]int64, n), make([]int64, n)
	for i, r := range rs {
		s.RankSends[i], s.RankRecvs[i] = r.Sends, r.Recvs
		s.RankBytesSent[i], s.RankBytesRecv[i] = r.BytesSent, r.BytesReceived
	}
	return s
}

// Summary implements workload.Program: sends, their bytes and compute per
// rank, from the schedule.
func (p *Program) Summary() workload.Summary {
	sum := workload.Summary{Collectives: map[string]int64{}}
	for k, n := range p.s.Collectives {
		sum.Collectives[k] = n
		sum.Header.CollOps += n
	}
	sum.Header.CollRecords = p.s.CollRecords
	sum.Header.Tasks = len(p.s.Ranks)
	var total int64
	for r := range p.s.Ranks {
		var compute int64
		for _, op := range p.s.Ranks[r].Ops {
			switch op.Kind {
			case sched.Send:
				if op.Coll {
					continue // a collective's step: counted as its collective
				}
				sum.Header.Messages++
				sum.P2PBytes += op.Bytes
			case sched.Calc:
				compute += op.Time
			}
		}
		sum.MaxCompute = max(sum.MaxCompute, compute)
		total += compute
	}
	if n := len(p.s.Ranks); n > 0 {
		sum.MeanCompute = total / int64(n)
	}
	return sum
}
