package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// SbatchFile is the job script `lpictl sweep submit` writes into DIR.
const SbatchFile = "sweep.sbatch"

// SlurmDir holds the array tasks' output files (DIR/slurm/%A_%a.out).
const SlurmDir = "slurm"

// Slurm holds the options of a job array.
type Slurm struct {
	// Exe is the absolute path of the lpictl binary the tasks run; Dir the
	// absolute sweep directory.
	Exe, Dir string
	// JobName defaults to the sweep's name.
	JobName                  string
	Partition, Time, Account string
	Mem                      string
	// MaxParallel (> 0) limits how many tasks run at once (%K).
	MaxParallel int
	CPUsPerTask int
	// Extra are further sbatch options, one #SBATCH line each.
	Extra []string
}

var sbatchTemplate = template.Must(template.New("sbatch").Funcs(template.FuncMap{"quote": shellQuote}).Parse(
	`#!/bin/sh
# lpictl sweep {{.Name}}: {{.Count}} pending run(s) of {{.Total}}, one array task each.
# Written by lpictl sweep submit; resubmit with the same command to run what is still pending.
#SBATCH --job-name={{.JobName}}
#SBATCH --array={{.Array}}
#SBATCH --output={{.Output}}
{{- range .Options}}
#SBATCH {{.}}
{{- end}}
exec {{quote .Exe}} sweep run-point {{quote .Dir}}
`))

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sbatchQuote double-quotes an #SBATCH option value holding white space.
func sbatchQuote(s string) string {
	if strings.ContainsAny(s, " \t") {
		return `"` + s + `"`
	}
	return s
}

// ArraySpec writes indexes (ascending) as Slurm's --array list: ranges of
// consecutive indexes ("0-3,5,7-9").
func ArraySpec(indexes []int) string {
	var parts []string
	for i := 0; i < len(indexes); {
		j := i
		for j+1 < len(indexes) && indexes[j+1] == indexes[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(indexes[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", indexes[i], indexes[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Pending lists the indexes of the runs that are not done, one per id
// (runs of equal ids share a directory and run once).
func Pending(dir string, plan *Plan) []int {
	var idx []int
	seen := map[string]bool{}
	for _, pt := range plan.Points {
		if seen[pt.ID] {
			continue
		}
		seen[pt.ID] = true
		if !Done(dir, pt) {
			idx = append(idx, pt.Index)
		}
	}
	return idx
}

// Sbatch writes the job script of a job array over the pending indexes.
func Sbatch(plan *Plan, pending []int, o Slurm) ([]byte, error) {
	if len(pending) == 0 {
		return nil, errors.New("nothing pending")
	}
	if !filepath.IsAbs(o.Exe) || !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("sbatch: the lpictl path and the sweep directory must be absolute (%s, %s)", o.Exe, o.Dir)
	}
	name := o.JobName
	if name == "" {
		name = plan.Name
	}
	array := ArraySpec(pending)
	if o.MaxParallel > 0 {
		array += "%" + strconv.Itoa(o.MaxParallel)
	}
	var opts []string
	add := func(flag, v string) {
		if v != "" {
			opts = append(opts, flag+"="+v)
		}
	}
	add("--partition", o.Partition)
	add("--time", o.Time)
	add("--account", o.Account)
	if o.CPUsPerTask > 0 {
		add("--cpus-per-task", strconv.Itoa(o.CPUsPerTask))
	}
	add("--mem", o.Mem)
	for _, x := range o.Extra {
		if strings.ContainsAny(x, "\r\n") {
			return nil, fmt.Errorf("--sbatch-arg %q: one option per line", printable(x))
		}
		opts = append(opts, x)
	}
	for _, v := range []string{name, o.Partition, o.Time, o.Account, o.Mem, o.Dir} {
		if strings.ContainsAny(v, "\r\n\"") {
			return nil, fmt.Errorf("sbatch option %q: holds a line break or a double quote", printable(v))
		}
	}
	var b bytes.Buffer
	err := sbatchTemplate.Execute(&b, map[string]any{
		"Name": plan.Name, "Count": len(pending), "Total": len(plan.Points),
		"JobName": name, "Array": array,
		"Output":  sbatchQuote(filepath.Join(o.Dir, SlurmDir, "%A_%a.out")),
		"Options": opts, "Exe": o.Exe, "Dir": o.Dir,
	})
	return b.Bytes(), err
}

// ErrNoSbatch is returned by Submit when sbatch is not on PATH.
var ErrNoSbatch = errors.New("sbatch not found on PATH (is this a Slurm login node?)")

// Submit runs `sbatch --parsable SCRIPT` and returns the job id.
func Submit(ctx context.Context, script string) (string, error) {
	sbatch, err := exec.LookPath("sbatch")
	if err != nil {
		return "", ErrNoSbatch
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sbatch, "--parsable", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("sbatch %s: %s", script, strings.ReplaceAll(msg, "\n", "; "))
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	id, _, _ := strings.Cut(out, ";") // "JOBID;CLUSTER"
	if id == "" {
		return "", fmt.Errorf("sbatch %s: printed no job id", script)
	}
	return id, nil
}
