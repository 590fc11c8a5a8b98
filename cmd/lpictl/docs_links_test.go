package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6} (.*)$`)
	mdInline  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	nonAnchor = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// mdAnchors returns the anchors GitHub gives the headings of a Markdown
// file: lower case, link syntax and punctuation dropped, spaces to '-',
// repeats numbered -1, -2, ….
func mdAnchors(t *testing.T, path string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, seen := map[string]bool{}, map[string]int{}
	inCode := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		text := strings.ReplaceAll(mdInline.ReplaceAllString(strings.TrimSpace(m[1]), "$1"), "`", "")
		a := strings.ReplaceAll(nonAnchor.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a += "-" + strconv.Itoa(n+1)
		} else {
			seen[a] = 0
		}
		out[a] = true
	}
	return out
}

// TestDocsLinks: every relative link in README.md, CONTRIBUTING.md and
// docs/*.md names a file of the repository and, for a Markdown file, one
// of its headings (a heading edited without its links breaks silently).
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md"))
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s: no such file", f, link)
				continue
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchors[target] == nil {
				anchors[target] = mdAnchors(t, target)
			}
			if !anchors[target][anchor] {
				t.Errorf("%s: link %s: no heading with that anchor in %s", f, link, target)
			}
		}
	}
}
