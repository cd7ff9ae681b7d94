package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Browser is headless Chromium, for checking pages as a person's browser
// renders them.
type Browser struct {
	path string
}

// Chromium finds chromium (see Tool for what happens when it is missing).
func Chromium(t testing.TB) *Browser {
	t.Helper()
	return &Browser{path: Tool(t, "chromium", "apt-get install chromium")}
}

// run starts chromium on url with the extra flags, a fresh profile and no
// traffic of its own, and returns its stdout. Chromium itself sometimes
// crashes on a loaded machine (a signal, not an exit status): such a run
// is started again, at most twice, and logged.
func (b *Browser) run(t testing.TB, url string, flags ...string) []byte {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, stderr, err := b.once(t, url, flags)
		if err == nil {
			return out
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ProcessState.Exited() || attempt == 3 {
			t.Fatalf("chromium %s: %v\n%s", url, err, stderr)
		}
		t.Logf("chromium %s crashed (%v), starting it again", url, err)
	}
}

func (b *Browser) once(t testing.TB, url string, flags []string) (out, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, b.path, append(args, url)...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err = cmd.Output()
	return out, errBuf.Bytes(), err
}

// DOM returns the page's DOM once it has loaded.
func (b *Browser) DOM(t testing.TB, url string) string {
	t.Helper()
	return string(b.run(t, url, "--dump-dom"))
}

// Screenshot saves the page, 1280 pixels wide, as a PNG at path, and fails
// the test unless the file decodes as a PNG of that width.
func (b *Browser) Screenshot(t testing.TB, url, path string) {
	t.Helper()
	b.run(t, url, "--screenshot="+path, "--window-size=1280,2000", "--hide-scrollbars")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the screenshot of %s was not written: %v", url, err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot %s is not a PNG: %v", path, err)
	}
	if w := img.Bounds().Dx(); w != 1280 {
		t.Errorf("the screenshot %s is %d pixels wide, want 1280", path, w)
	}
	t.Logf("screenshot of %s: %s", url, path)
}

// wrapCheck runs in the page Chromium renders: it lists every table
// cell's text that a line break splits where a reader needs it whole: any
// line of a right-aligned number cell (td.num), and in any cell a number
// with its unit ("47.2 ms").
const wrapCheck = `<script>
(() => {
  const bad = [];
  const broken = (node, from, to) => {
    const r = document.createRange();
    r.setStart(node, from); r.setEnd(node, to);
    const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
    return tops.size > 1;
  };
  for (const td of document.querySelectorAll('td')) {
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const text = n.textContent;
      if (td.classList.contains('num') && text.trim() && broken(n, 0, text.length)) {
        bad.push(text.trim());
        continue;
      }
      for (const m of text.matchAll(/\d[\d.,]*\s(ms|µs|s|%|req\/s|tok\/s)(?![\w\/])/g)) {
        if (broken(n, m.index, m.index + m[0].length)) bad.push(m[0]);
      }
    }
  }
  const out = document.createElement('pre');
  out.id = 'wrapped-cells';
  out.textContent = JSON.stringify(bad);
  document.body.append(out);
})();
</script>`

// WrappedCells renders page (a whole HTML document) in a window width
// pixels wide and returns the table cells' numbers that a line break
// splits: a number cell's line, or a number from its unit.
func (b *Browser) WrappedCells(t testing.TB, page string, width int) []string {
	t.Helper()
	i := strings.LastIndex(page, "</body>")
	if i < 0 {
		t.Fatal("the page has no </body>")
	}
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(page[:i]+wrapCheck+page[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(b.run(t, "file://"+file, "--dump-dom", fmt.Sprintf("--window-size=%d,2000", width)))
	m := regexp.MustCompile(`<pre id="wrapped-cells">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the wrap check did not run in Chromium:\n%s", dom)
	}
	var wrapped []string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &wrapped); err != nil {
		t.Fatalf("the wrap check's result %q: %v", m[1], err)
	}
	return wrapped
}
