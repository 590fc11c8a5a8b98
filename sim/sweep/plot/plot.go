package plot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lpictl/lpictl/configs"
)

// Options select and shape a figure.
type Options struct {
	Figure string            // one of Figures()
	X      string            // generic: the x column
	Y      []string          // generic: the y columns, one panel each
	Series []string          // generic: columns whose joined values name a series
	Where  map[string]string // keep only rows whose column equals the value
	LogX   bool              // generic: log x axis (0 drawn one decade left of the smallest value)
	LogY   bool              // generic: log y axis
	Class  string            // idle-hist: the idle_hist.csv class (default "all")
	Weight string            // idle-hist: bars of "count" (periods, paper 000 Fig. 1; default) or "time" (idle time)
	Title  string            // figure title (default: plan.json's sweep name)
}

// inputErr is bad input (configs.InputError: the CLI exits 2): an unknown
// figure or format, a missing file or column, an unparsable cell, nothing
// left to plot.
func inputErr(format string, a ...any) error {
	return &configs.InputError{Err: fmt.Errorf(format, a...)}
}

// Figures lists the figure names Write accepts.
func Figures() []string {
	return []string{"pdt-sweep", "predictors", "idle-hist", "powar", "generic"}
}

// Write draws figure o.Figure from the sweep directory dir (its
// results.csv, plan.json and points/<id>/idle_hist.csv) into out, a .png
// or .svg file, written atomically. Bad input is a *configs.InputError.
func Write(dir, out string, o Options) error {
	known := false
	for _, f := range Figures() {
		known = known || f == o.Figure
	}
	if !known {
		return inputErr("unknown figure %q (figures: %s)", o.Figure, strings.Join(Figures(), ", "))
	}
	if ext := strings.ToLower(filepath.Ext(out)); ext != ".png" && ext != ".svg" {
		return inputErr("output %s: unknown format %q (want .png or .svg)", out, ext)
	}
	path := filepath.Join(dir, "results.csv")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return inputErr("%s: no such file (run `lpictl sweep collect %s` first)", path, dir)
	}
	t, err := ReadResults(path)
	if err != nil {
		return err
	}
	rows, err := t.filter(o.Where)
	if err != nil {
		return err
	}
	var f *figure
	switch o.Figure {
	case "pdt-sweep":
		f, err = pdtSweep(t, rows)
	case "predictors":
		f, err = predictors(t, rows)
	case "idle-hist":
		class := o.Class
		if class == "" {
			class = "all"
		}
		f, err = idleHist(dir, t, rows, class, o.Weight)
	case "powar":
		f, err = powarFigure(t, rows)
	case "generic":
		f, err = generic(t, rows, o)
	}
	if err != nil {
		return err
	}
	f.title = o.Title
	if f.title == "" {
		if f.title, err = sweepName(dir); err != nil {
			return err
		}
		if o.Figure == "idle-hist" {
			class := o.Class
			if class == "" {
				class = "all"
			}
			f.title += ": idle periods (class " + class + ")"
		}
	}
	return f.save(out)
}

// sweepName is DIR/plan.json's "name", or DIR's base name without a plan.
func sweepName(dir string) (string, error) {
	path := filepath.Join(dir, "plan.json")
	data, err := configs.ReadFileLimit(path, 256<<20, "a sweep plan") // sweep.MaxPlanSize
	if errors.Is(err, fs.ErrNotExist) {
		abs, aerr := filepath.Abs(dir)
		if aerr != nil {
			return filepath.Base(dir), nil
		}
		return filepath.Base(abs), nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	var plan struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &plan); err != nil {
		return "", &configs.InputError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	return plan.Name, nil
}

// ParseWhere reads --where COL=VALUE filters into Options.Where.
func ParseWhere(where []string) (map[string]string, error) {
	m := map[string]string{}
	for _, w := range where {
		k, v, ok := strings.Cut(w, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, inputErr("--where %q: want COL=VALUE", w)
		}
		m[strings.TrimSpace(k)] = v
	}
	return m, nil
}
