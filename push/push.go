// Package push sends a gate's or a comparison's run to a Pushgateway as the
// burst series the dashboards read, one group per job, burst and target, so
// that the next run of the same burst and target replaces it.
package push

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"
	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
)

// The jobs of the pushed groups: a gate's and a comparison's runs of one
// burst and target are groups of their own.
const (
	JobGate    = "llmprobe_gate"
	JobCompare = "llmprobe_compare"
)

// MaxRelease is the longest release label value: a version, a tag or a
// commit, not free text.
const MaxRelease = 64

// releaseRe is the release label's charset: what versions, tags and
// commits are written with.
var releaseRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// Pusher pushes runs to one Pushgateway.
type Pusher struct {
	url     string
	client  *http.Client
	release string
	secrets []string
}

// New checks the flags and loads the HTTP client configuration; a nil
// Pusher (and no error) when url is empty: nothing is pushed. Errors name
// the flag at fault and never echo a credential.
func New(rawURL, httpConfigFile, release string) (*Pusher, error) {
	if rawURL == "" {
		if httpConfigFile != "" || release != "" {
			return nil, fmt.Errorf("--push.http-config.file and --push.release need --push.url")
		}
		return nil, nil
	}
	if err := checkURL(rawURL); err != nil {
		return nil, err
	}
	if err := checkRelease(release); err != nil {
		return nil, err
	}
	hc := promconfig.DefaultHTTPClientConfig
	if httpConfigFile != "" {
		cfg, _, err := promconfig.LoadHTTPConfigFile(httpConfigFile)
		if err != nil {
			return nil, fmt.Errorf("--push.http-config.file=%s: %w", httpConfigFile, err)
		}
		hc = *cfg
	}
	client, err := promconfig.NewClientFromConfig(hc, "llmprobe_push")
	if err != nil {
		return nil, fmt.Errorf("--push.http-config.file=%s: %w", httpConfigFile, err)
	}
	return &Pusher{url: rawURL, client: client, release: release, secrets: config.TargetSecrets(config.Target{HTTPClientConfig: hc})}, nil
}

// checkURL accepts an http or https URL without credentials, query or
// fragment; its errors say what is wrong without repeating the URL, which
// may hold a password.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("--push.url is not a URL")
	case u.User != nil:
		return fmt.Errorf("--push.url holds credentials (user info before the host), which would show in process lists and CI logs: put them in --push.http-config.file (basic_auth with password_file, or authorization with credentials_file)")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--push.url needs an http or https URL like http://pushgateway:9091, not scheme %q", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("--push.url needs a host, like http://pushgateway:9091")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("--push.url takes no query or fragment: the group is the path llmprobe writes")
	}
	return nil
}

// checkRelease bounds the release label: the user writes it, and it
// becomes a label value in every pushed sample.
func checkRelease(release string) error {
	switch {
	case release == "":
		return nil
	case len(release) > MaxRelease:
		return fmt.Errorf("--push.release is %d characters long, more than %d: give a version, tag or commit", len(release), MaxRelease)
	case !releaseRe.MatchString(release):
		return fmt.Errorf("--push.release=%q: letters, digits and . _ + - only, starting with a letter or digit (like v1.2.3 or 0.12.0+abc123)", release)
	}
	return nil
}

// Secrets are the credentials of the HTTP configuration (written in it or
// read from its files, in every form a request carries them), to be masked
// wherever the caller writes text: a push error may quote what a
// Pushgateway or a proxy answered.
func (p *Pusher) Secrets() []string {
	if p == nil {
		return nil
	}
	return p.secrets
}

// Push replaces the group {job, burst, target} of r with r's burst series
// as the daemon exports them (the burst collector's), each with the release
// label where one was given. PUT replaces the whole group, so no series of
// an earlier run of the group stays behind.
func (p *Pusher) Push(ctx context.Context, job string, r *report.Report) error {
	reg := prometheus.NewRegistry()
	bursts := collector.NewBursts()
	bursts.Finished(r, nil)
	var into prometheus.Registerer = reg
	if p.release != "" {
		into = prometheus.WrapRegistererWith(prometheus.Labels{"release": p.release}, reg)
	}
	if err := into.Register(bursts); err != nil {
		return err
	}
	return push.New(p.url, job).Client(p.client).
		Grouping("burst", r.Burst).Grouping("target", r.Target).
		Gatherer(withoutLabel(reg, "burst")).
		PushContext(ctx)
}

// withoutLabel gathers g and drops label name from every series: the
// grouping label of that name puts it back (the Pushgateway refuses a
// series that carries a grouping label itself).
func withoutLabel(g prometheus.Gatherer, name string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		for _, mf := range mfs {
			for _, m := range mf.Metric {
				m.Label = slices.DeleteFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == name })
			}
		}
		return mfs, err
	})
}
