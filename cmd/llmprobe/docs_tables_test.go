package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxCell is the longest table cell the docs may have: longer text goes
// under the table, where it can be read.
const maxCell = 300

// tableCells returns the cells of a table row, split at unescaped pipes
// (GitHub splits inside code spans too), each with its 1-based column.
func tableCells(row string) (cells []string, cols []int) {
	start, inner := 0, strings.TrimRight(row, " ")
	for i := 0; i <= len(inner); i++ {
		if i < len(inner) && (inner[i] != '|' || (i > 0 && inner[i-1] == '\\')) {
			continue
		}
		if i > start {
			cells = append(cells, inner[start:i])
			cols = append(cols, utf8.RuneCountInString(inner[:start])+1)
		}
		start = i + 1
	}
	return cells, cols
}

// No table cell of README.md or docs/*.md is longer than maxCell
// characters: a cell that long is a paragraph, read better under the table.
func TestDocsTableCellsAreShort(t *testing.T) {
	root := filepath.Join("..", "..")
	rows := 0
	for _, rel := range docsFiles(t, root) {
		for _, l := range readMarkdown(t, root, rel).lines {
			if !strings.HasPrefix(strings.TrimSpace(l.text), "|") {
				continue
			}
			rows++
			cells, cols := tableCells(l.text)
			for i, c := range cells {
				if n := utf8.RuneCountInString(strings.TrimSpace(c)); n > maxCell {
					t.Errorf("%s:%d:%d: table cell %d is %d characters, at most %d: move the text under the table (%.60q…)", rel, l.n, cols[i], i+1, n, maxCell, strings.TrimSpace(c))
				}
			}
		}
	}
	if rows < 300 {
		t.Errorf("only %d table rows read: the table reader is broken", rows)
	}
}
