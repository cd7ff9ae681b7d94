package daemon

import (
	"bytes"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// pageHandler serves its registries' page as promhttp.HandlerFor does with
// EnableOpenMetrics and ContinueOnError (same negotiation, escaping,
// encoders, name[] filter and errors), but encodes the families in
// contiguous shards, one goroutine each, and gzips each shard as its own
// gzip member: on 2 cores one encoder and one gzip stream were half the
// render. Concatenated members are one gzip stream (RFC 1952).
type pageHandler struct {
	regs     []prometheus.Gatherer // disjoint families
	errorLog promhttp.Logger
	shards   int // at most; 0 is GOMAXPROCS
}

func (h *pageHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	mfs, err := gatherAll(h.regs)
	if err != nil {
		h.errorLog.Println("error gathering metrics:", err)
		if len(mfs) == 0 {
			w.Header().Del("Content-Encoding")
			http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	format := expfmt.NegotiateAccept(req.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	w.Header().Add("Vary", "Accept")
	w.Header().Set("Content-Type", string(format))
	if req.URL != nil {
		mfs = filterNames(mfs, req.URL.Query()["name[]"])
	}
	n := h.shards
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	zip := gzipChosen(w)
	parts := renderPage(mfs, format, n, zip, h.errorLog)
	defer putBuffers(parts)
	size := 0
	for _, p := range parts {
		size += p.Len()
	}
	if zip {
		w.Header().Set("Content-Encoding", "gzip")
	}
	w.Header().Set("Content-Length", strconv.Itoa(size))
	for _, p := range parts {
		if _, err := w.Write(p.Bytes()); err != nil {
			return // the scraper went away
		}
	}
}

// gatherAll gathers regs at once, each registry checking and sorting its
// metrics in one goroutine, and merges their families by name. A family
// in two of them is left to prometheus.Gatherers to merge and check.
func gatherAll(regs []prometheus.Gatherer) ([]*dto.MetricFamily, error) {
	got := make([][]*dto.MetricFamily, len(regs))
	errs := make([]error, len(regs))
	var wg sync.WaitGroup
	for i, reg := range regs[1:] {
		wg.Go(func() { got[i+1], errs[i+1] = reg.Gather() })
	}
	got[0], errs[0] = regs[0].Gather()
	wg.Wait()
	mfs := slices.Concat(got...)
	slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	for i := 1; i < len(mfs); i++ {
		if mfs[i].GetName() == mfs[i-1].GetName() {
			return prometheus.Gatherers(regs).Gather()
		}
	}
	var multi prometheus.MultiError
	for _, err := range errs {
		multi.Append(err)
	}
	return mfs, multi.MaybeUnwrap()
}

// gzipChosen is whether gzhttp, which wraps the handler, negotiated gzip
// for this request (its only encoding here). The page is then compressed
// here and gzhttp, seeing Content-Encoding, passes it through.
func gzipChosen(w http.ResponseWriter) bool {
	switch w.(type) {
	case *gzhttp.GzipResponseWriter, gzhttp.GzipResponseWriterWithCloseNotify:
		return true
	}
	return false
}

// filterNames keeps the families named, all of them without names.
func filterNames(mfs []*dto.MetricFamily, names []string) []*dto.MetricFamily {
	if len(names) == 0 {
		return mfs
	}
	keep := make(map[string]bool, len(names))
	for _, name := range names {
		keep[name] = true
	}
	out := make([]*dto.MetricFamily, 0, len(names))
	for _, mf := range mfs {
		if keep[mf.GetName()] {
			out = append(out, mf)
		}
	}
	return out
}

// renderPage encodes mfs in format, in up to n shards of about equal
// size, concurrently; each part is a gzip member when zip. The last shard
// closes the encoder: OpenMetrics' one # EOF.
func renderPage(mfs []*dto.MetricFamily, format expfmt.Format, n int, zip bool, errorLog promhttp.Logger) []*bytes.Buffer {
	cuts := shardCuts(mfs, n)
	parts := make([]*bytes.Buffer, len(cuts)-1)
	var wg sync.WaitGroup
	for i := range parts {
		last := i == len(parts)-1
		shard := mfs[cuts[i]:cuts[i+1]]
		if last {
			parts[i] = renderShard(shard, format, last, zip, errorLog)
			break
		}
		wg.Go(func() { parts[i] = renderShard(shard, format, last, zip, errorLog) })
	}
	wg.Wait()
	return parts
}

// shardCuts splits mfs into at most n contiguous runs of about equal
// weight: cuts[i]:cuts[i+1] is run i.
func shardCuts(mfs []*dto.MetricFamily, n int) []int {
	weights := make([]int, len(mfs))
	total := 0
	for i, mf := range mfs {
		weights[i] = familyWeight(mf)
		total += weights[i]
	}
	cuts := []int{0}
	acc := 0
	for i, w := range weights {
		acc += w
		// Cut after i once the runs so far hold their share.
		if k := len(cuts); k < n && i+1 < len(mfs) && acc*n >= total*k {
			cuts = append(cuts, i+1)
		}
	}
	return append(cuts, len(mfs))
}

// familyWeight is about how many lines mf encodes into.
func familyWeight(mf *dto.MetricFamily) int {
	w := 2 // HELP and TYPE
	for _, m := range mf.GetMetric() {
		w++
		if h := m.GetHistogram(); h != nil {
			w += len(h.GetBucket()) + 2
		}
		if s := m.GetSummary(); s != nil {
			w += len(s.GetQuantile()) + 2
		}
	}
	return w
}

// renderShard encodes one shard into a pooled buffer, gzipped when zip.
// As promhttp with ContinueOnError, a family that fails to encode is
// logged and the rest are still sent.
func renderShard(mfs []*dto.MetricFamily, format expfmt.Format, last, zip bool, errorLog promhttp.Logger) *bytes.Buffer {
	text := getBuffer()
	enc := expfmt.NewEncoder(text, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			errorLog.Println("error encoding and sending metric family:", err)
		}
	}
	if closer, ok := enc.(expfmt.Closer); ok && last {
		if err := closer.Close(); err != nil {
			errorLog.Println("error encoding and sending metric family:", err)
		}
	}
	if !zip {
		return text
	}
	defer putBuffers([]*bytes.Buffer{text})
	out := getBuffer()
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(out)
	// Writes to a bytes.Buffer do not fail.
	_, _ = zw.Write(text.Bytes())
	_ = zw.Close()
	return out
}

var (
	buffers     = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipWriters = sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level
		return zw
	}}
)

func getBuffer() *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffers(bs []*bytes.Buffer) {
	for _, b := range bs {
		buffers.Put(b)
	}
}
