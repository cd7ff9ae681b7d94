package push

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/report"
)

// Flags are a command's --push.* flags.
type Flags struct{ url, httpConfig, release *string }

// AddFlags adds --push.url, --push.http-config.file and --push.release to
// cmd, whose runs are pushed as job.
func AddFlags(cmd *kingpin.CmdClause, job string) Flags {
	return Flags{
		url:        cmd.Flag("push.url", "Push the run's verdict and figures (the llmprobe_burst_* series) to this Pushgateway as the group {job=\""+job+"\", burst, target}, replacing the group's last run (on every exit but 2). No credentials in the URL: see --push.http-config.file. A failed push is a warning: the exit code stays the verdict's.").PlaceHolder("URL").String(),
		httpConfig: cmd.Flag("push.http-config.file", "HTTP client configuration of the push, in prometheus/common's format (basic_auth, authorization, tls_config, proxy_url).").PlaceHolder("FILE").String(),
		release:    cmd.Flag("push.release", "Label every pushed sample release=\"VALUE\" (up to 64 letters, digits and . _ + -, like v1.2.3).").PlaceHolder("VALUE").String(),
	}
}

// Pusher checks the flags: nil without --push.url.
func (f Flags) Pusher() (*Pusher, error) {
	return New(*f.url, *f.httpConfig, *f.release)
}

// Timeout bounds a push, which runs after the verdict even when the run was
// interrupted.
const Timeout = 30 * time.Second

// Publish pushes r as job's run where p is set, saying on stderr (as
// llmprobe's command cmd) what it pushed or why it could not. A failed push leaves the exit code to the
// verdict: the verdict is the pipeline's contract, the Pushgateway its
// monitoring.
func Publish(ctx context.Context, p *Pusher, cmd, job string, r *report.Report, stderr io.Writer) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	if err := p.Push(ctx, job, r); err != nil {
		red := redact.New() // the caller may not mask its stderr (report merge)
		red.Add(p.Secrets())
		fmt.Fprintf(red.Writer(stderr), "llmprobe %s: WARNING: the run was not pushed to --push.url (the exit code is the verdict's): %v\n", cmd, err)
		return
	}
	fmt.Fprintf(stderr, "llmprobe %s: pushed to --push.url as {job=%q, burst=%q, target=%q}\n", cmd, job, r.Burst, r.Target)
}
