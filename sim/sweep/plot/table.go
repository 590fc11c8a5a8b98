package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/configs"
)

// Table is a CSV file read by column name: results.csv or idle_hist.csv.
type Table struct {
	Path   string     // the file it was read from, for error messages
	Header []string   // column names in file order
	Rows   [][]string // one slice per data row, len(Header) cells each
	index  map[string]int
}

// ReadResults reads a sweep's results.csv (or any CSV with a header row).
// A missing file, a missing or duplicated header and rows whose cell count
// differs from the header's are errors naming the file (and line).
func ReadResults(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &configs.InputError{Err: fmt.Errorf("%s: no such file: %w", path, err)}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = false
	recs, err := r.ReadAll()
	if err != nil {
		return nil, &configs.InputError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	if len(recs) == 0 {
		return nil, inputErr("%s: empty file (want a header row)", path)
	}
	t := &Table{Path: path, Header: recs[0], Rows: recs[1:], index: map[string]int{}}
	for i, name := range t.Header {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, inputErr("%s: column %d has an empty name", path, i+1)
		}
		if _, dup := t.index[name]; dup {
			return nil, inputErr("%s: column %q appears twice", path, name)
		}
		t.Header[i] = name
		t.index[name] = i
	}
	return t, nil
}

// Has reports whether the table has column name.
func (t *Table) Has(name string) bool {
	_, ok := t.index[name]
	return ok
}

// Col returns the index of column name, or an error naming the file, the
// column and the columns that exist.
func (t *Table) Col(name string) (int, error) {
	if i, ok := t.index[name]; ok {
		return i, nil
	}
	return 0, inputErr("%s: no column %q (columns: %s)", t.Path, name, strings.Join(t.Header, ", "))
}

// Cell returns row r's value of column name ("" when the column is absent).
func (t *Table) Cell(r int, name string) string {
	i, ok := t.index[name]
	if !ok {
		return ""
	}
	return t.Rows[r][i]
}

// Float returns row r's value of column name as a number; ok is false for
// an empty cell (a value that does not exist). Line numbers in errors count
// the header as line 1.
func (t *Table) Float(r int, name string) (v float64, ok bool, err error) {
	s := strings.TrimSpace(t.Cell(r, name))
	if s == "" {
		return 0, false, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, inputErr("%s: column %s row %d: unparsable number %q", t.Path, name, r+2, s)
	}
	return v, true, nil
}

// filter returns the indexes of the rows with status ok (when the table has
// a status column) that match every where clause, in file order. Where
// keys must be columns.
func (t *Table) filter(where map[string]string) ([]int, error) {
	keys := make([]string, 0, len(where))
	for k := range where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := t.Col(k); err != nil {
			return nil, fmt.Errorf("--where %s=%s: %w", k, where[k], err)
		}
	}
	var rows []int
	for r := range t.Rows {
		if t.Has("status") && t.Cell(r, "status") != "ok" {
			continue
		}
		keep := true
		for _, k := range keys {
			keep = keep && t.Cell(r, k) == where[k]
		}
		if keep {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		if len(keys) == 0 {
			return nil, inputErr("%s: no rows with status ok", t.Path)
		}
		w := make([]string, len(keys))
		for i, k := range keys {
			w[i] = k + "=" + where[k]
		}
		return nil, inputErr("%s: no rows with status ok and %s", t.Path, strings.Join(w, ", "))
	}
	return rows, nil
}
