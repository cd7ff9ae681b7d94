package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// mdLine is one line of a Markdown file outside fenced code blocks.
type mdLine struct {
	n    int // 1-based
	text string
}

// mdFile is a Markdown file read for the docs' checks.
type mdFile struct {
	path  string // as the errors name it, relative to the repository
	lines []mdLine
}

func readMarkdown(t *testing.T, root, rel string) mdFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	f := mdFile{path: rel}
	fence := ""
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		f.lines = append(f.lines, mdLine{i + 1, line})
	}
	return f
}

// docsFiles are README.md and every docs/*.md page, relative to root.
func docsFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) < 20 {
		t.Fatalf("docs/*.md: %d pages, %v", len(pages), err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		out = append(out, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
	return out
}

// withoutCodeSpans blanks the inside of inline code spans, so a link or an
// anchor written as code is not read as one.
func withoutCodeSpans(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 1
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		fence := strings.Repeat("`", n)
		end := strings.Index(string(b[i+n:]), fence)
		if end < 0 {
			i += n
			continue
		}
		for j := i + n; j < i+n+end; j++ {
			b[j] = ' '
		}
		i += 2*n + end
	}
	return string(b)
}

var (
	linkRe   = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	hrefRe   = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	anchorRe = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	headRe   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLinkRe = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// link is one relative link of a Markdown file.
type link struct {
	line, col int
	target    string
}

func (f mdFile) links() []link {
	var out []link
	for _, l := range f.lines {
		text := withoutCodeSpans(l.text)
		for _, re := range []*regexp.Regexp{linkRe, hrefRe} {
			for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
				target := text[m[2]:m[3]]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				out = append(out, link{l.n, utf8.RuneCountInString(text[:m[0]]) + 1, target})
			}
		}
	}
	return out
}

// githubSlug is the anchor GitHub gives a heading: its text without
// Markdown, lower case, spaces to hyphens, other punctuation but - and _
// dropped.
func githubSlug(heading string) string {
	heading = mdLinkRe.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are a file's heading slugs (repeats numbered as GitHub does) and
// its <a id> anchors.
func (f mdFile) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range f.lines {
		if m := headRe.FindStringSubmatch(l.text); m != nil {
			slug := githubSlug(m[2])
			if n := seen[slug]; n > 0 {
				out[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				out[slug] = true
			}
			seen[slug]++
		}
		for _, m := range anchorRe.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// Every relative link of README.md and docs/*.md names a file or folder
// that exists and, into a Markdown file, an anchor that file has.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if anchors[rel] == nil {
			anchors[rel] = readMarkdown(t, root, rel).anchors()
		}
		return anchors[rel]
	}
	checked := 0
	for _, rel := range docsFiles(t, root) {
		f := readMarkdown(t, root, rel)
		for _, l := range f.links() {
			checked++
			where := fmt.Sprintf("%s:%d:%d: link %s", rel, l.line, l.col, l.target)
			path, fragment, _ := strings.Cut(l.target, "#")
			dest := rel
			if path != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(rel), path)))
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s: leaves the repository", where)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s: no such file (%s)", where, dest)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[fragment] {
				t.Errorf("%s: %s has no heading or <a id> with anchor #%s", where, dest, fragment)
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d links read: the link reader is broken", checked)
	}
}

// The docs index links every page of docs/, and the README points to it.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	root := filepath.Join("..", "..")
	index := readMarkdown(t, root, "docs/README.md")
	linked := map[string]bool{}
	for _, l := range index.links() {
		path, _, _ := strings.Cut(l.target, "#")
		linked[filepath.Base(path)] = true
	}
	for _, rel := range docsFiles(t, root) {
		if page := filepath.Base(rel); strings.HasPrefix(rel, "docs/") && page != "README.md" && !linked[page] {
			t.Errorf("docs/README.md does not link %s", rel)
		}
	}
	readme := readMarkdown(t, root, "README.md")
	in, items, points := false, 0, false
	for _, l := range readme.lines {
		switch {
		case strings.HasPrefix(l.text, "## "):
			in = l.text == "## Documentation"
		case in && strings.HasPrefix(l.text, "- "):
			items++
			points = points || strings.Contains(l.text, "(docs/README.md)")
		}
	}
	if !points || items > 12 {
		t.Errorf("README's Documentation list: %d items, links docs/README.md: %v; want a short list that points to the index", items, points)
	}
}

// A heading is one heading: two run together ("## Units## Units") or a
// page without its title are Markdown broken in editing.
func TestDocsHeadings(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, rel := range docsFiles(t, root) {
		f := readMarkdown(t, root, rel)
		if len(f.lines) == 0 || !strings.HasPrefix(f.lines[0].text, "# ") {
			t.Errorf("%s: the first line is not the page's # title", rel)
		}
		for _, l := range f.lines {
			if m := headRe.FindStringSubmatch(l.text); m != nil && strings.Contains(withoutCodeSpans(m[2]), "##") {
				t.Errorf("%s:%d: two headings on one line: %q", rel, l.n, l.text)
			}
		}
	}
}

// The anchors the link check accepts are GitHub's.
func TestDocsGitHubSlugs(t *testing.T) {
	for heading, want := range map[string]string{
		"TTFT went up — where?":                         "ttft-went-up--where",
		"Upgrade bursts: `schedule.on_engine_change`":   "upgrade-bursts-scheduleon_engine_change",
		"Memory, and the bound `--config.check` states": "memory-and-the-bound---configcheck-states",
		"The objective: `slo.quality_ratio`":            "the-objective-sloquality_ratio",
		"[Bursts](x.md) and 2 more":                     "bursts-and-2-more",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
}
