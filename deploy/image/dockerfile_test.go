package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The Dockerfile stays for those who build with Docker; it must give the
// image make image gives: user, entrypoint and arguments, working
// directory, port, labels (with the same build arguments), the binary's
// path.
func TestDockerfileAgreesWithTheBuilder(t *testing.T) {
	b, err := os.ReadFile("../docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range disagreements(t, string(b)) {
		t.Error("deploy/docker/Dockerfile: " + d)
	}
}

// The comparison finds each kind of drift.
func TestDockerfileDisagreementsAreFound(t *testing.T) {
	b, err := os.ReadFile("../docker/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	for change, want := range map[[2]string]string{
		{"USER 65532:65532", "USER 1000"}:                                 `user "1000"`,
		{"EXPOSE 9479", "EXPOSE 9479 8080/udp"}:                           "ports [8080/udp 9479/tcp]",
		{`"${REVISION}"`, `"${VERSION}"`}:                                 "labels",
		{`ENTRYPOINT ["/usr/local/bin/llmprobe"]`, "ENTRYPOINT llmprobe"}: `entrypoint ["/bin/sh" "-c" "llmprobe"]`,
		{"WORKDIR /var/lib/llmprobe", "WORKDIR /data"}:                    `working dir "/data"`,
		{"/usr/local/bin/llmprobe\nUSER", "/bin/llmprobe\nUSER"}:          `binary copied to "/bin/llmprobe"`,
	} {
		bad := strings.Replace(good, change[0], change[1], 1)
		if bad == good {
			t.Fatalf("the Dockerfile has no %q to change", change[0])
		}
		if d := strings.Join(disagreements(t, bad), "\n"); !strings.Contains(d, want) {
			t.Errorf("with %q for %q: disagreements %q, want one with %q", change[1], change[0], d, want)
		}
	}
}

func disagreements(t *testing.T, dockerfile string) []string {
	t.Helper()
	args := map[string]string{"VERSION": "v9.8.7", "REVISION": "f00d", "BUILD_DATE": "2026-01-02T03:04:05Z"}
	s, err := finalStage(dockerfile, args)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	check := func(what string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			out = append(out, fmt.Sprintf("%s %s, the builder's %s", what, got, want))
		}
	}
	check("user", strconv.Quote(s.user), strconv.Quote(strconv.Itoa(UID)+":"+strconv.Itoa(GID)))
	check("entrypoint", quoted(s.entrypoint), quoted([]string{BinaryPath}))
	check("cmd", quoted(s.cmd), quoted(Cmd))
	check("working dir", strconv.Quote(s.workdir), strconv.Quote(WorkingDir))
	check("ports", s.ports, []string{Port})
	check("labels", s.labels, Labels(args["VERSION"], args["REVISION"], args["BUILD_DATE"]))
	check("binary copied to", strconv.Quote(s.binaryDest), strconv.Quote(BinaryPath))
	return out
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// stage is what the final stage of a Dockerfile sets of the image's
// configuration.
type stage struct {
	user, workdir, binaryDest string
	entrypoint, cmd, ports    []string
	labels                    map[string]string
}

// finalStage reads the few instructions the image's configuration comes
// from, with Docker's rules for them: continuation lines, comments, ARG
// scope per stage, ${ARG} in LABEL, USER, WORKDIR and EXPOSE, exec and
// shell forms. A small reader of these six instructions instead of
// BuildKit's parser, whose module brings BuildKit's dependencies along.
func finalStage(dockerfile string, buildArgs map[string]string) (stage, error) {
	var s stage
	var vars map[string]string
	for n, ins := range instructions(dockerfile) {
		word, rest, _ := strings.Cut(ins, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(word) {
		case "FROM":
			s, vars = stage{labels: map[string]string{}}, map[string]string{}
		case "ARG":
			name, def, _ := strings.Cut(rest, "=")
			if v, ok := buildArgs[name]; ok {
				def = v
			}
			vars[name] = def
		case "LABEL":
			for _, kv := range words(expand(rest, vars)) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return s, fmt.Errorf("instruction %d: LABEL %q is not key=value", n+1, kv)
				}
				s.labels[k] = v
			}
		case "USER":
			s.user = expand(rest, vars)
		case "WORKDIR":
			s.workdir = expand(rest, vars)
		case "EXPOSE":
			for _, p := range words(expand(rest, vars)) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				s.ports = append(s.ports, p)
			}
			slices.Sort(s.ports)
		case "ENTRYPOINT":
			s.entrypoint = execForm(rest)
		case "CMD":
			s.cmd = execForm(rest)
		case "COPY":
			if w := words(rest); strings.HasSuffix(w[len(w)-2], "/llmprobe") {
				s.binaryDest = w[len(w)-1]
			}
		}
	}
	return s, nil
}

// instructions joins continued lines and drops comments and blank lines.
func instructions(dockerfile string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(dockerfile) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

var argRef = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

func expand(s string, vars map[string]string) string {
	return argRef.ReplaceAllStringFunc(s, func(m string) string {
		return vars[strings.Trim(m, "${}")]
	})
}

// words splits on blanks outside double quotes, dropping the quotes.
func words(s string) []string {
	var out []string
	var w strings.Builder
	in, started := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in, started = !in, true
		case (r == ' ' || r == '\t') && !in:
			if started {
				out = append(out, w.String())
			}
			w.Reset()
			started = false
		default:
			w.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, w.String())
	}
	return out
}

// execForm is an ENTRYPOINT's or CMD's arguments: its JSON array, or the
// shell's command line, which a distroless image could not run.
func execForm(s string) []string {
	var args []string
	if json.Unmarshal([]byte(s), &args) == nil {
		return args
	}
	return []string{"/bin/sh", "-c", s}
}
