// Package speech reads an audio transcription request (OpenAI's
// multipart/form-data, with vLLM's streaming fields) and what the sim hears
// of its clip: a WAV's length, and the transcript its INFO comment carries.
package speech

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/llmprobe/llmprobe/lib/wav"
	"github.com/llmprobe/llmprobe/sim/internal/request"
)

// Request is a transcription request's form.
type Request struct {
	Model string
	// File is the audio; nil when the form has no file.
	File []byte
	// Stream, IncludeUsage and ContinuousUsage are vLLM's form fields
	// stream, stream_include_usage and stream_continuous_usage_stats.
	Stream, IncludeUsage, ContinuousUsage bool
	ResponseFormat                        string
}

// maxField bounds a form field other than the file.
const maxField = 64 << 10

// Read reads r's form, its body bounded by request.MaxBody (past it
// request.ErrTooLarge); language, temperature, prompt and fields it does
// not know are read and ignored.
func Read(w http.ResponseWriter, r *http.Request) (*Request, error) {
	r.Body = http.MaxBytesReader(w, r.Body, request.MaxBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, fmt.Errorf("the body must be multipart/form-data: %v", err)
	}
	req := &Request{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return req, nil
		}
		if err != nil {
			return nil, readError(err)
		}
		if p.FormName() == "file" {
			if req.File, err = io.ReadAll(p); err != nil {
				return nil, readError(err)
			}
			continue
		}
		value, err := io.ReadAll(io.LimitReader(p, maxField+1))
		switch {
		case err != nil:
			return nil, readError(err)
		case len(value) > maxField:
			return nil, fmt.Errorf("form field %s is over %d KiB", p.FormName(), maxField>>10)
		}
		if err := req.set(p.FormName(), string(value)); err != nil {
			return nil, err
		}
	}
}

// set sets the field name of the form to value.
func (req *Request) set(name, value string) error {
	flag := func(b *bool) error {
		if value == "" {
			return nil
		}
		v, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s must be true or false, not %q", name, value)
		}
		*b = v
		return nil
	}
	switch name {
	case "model":
		req.Model = value
	case "response_format":
		req.ResponseFormat = value
	case "stream":
		return flag(&req.Stream)
	case "stream_include_usage":
		return flag(&req.IncludeUsage)
	case "stream_continuous_usage_stats":
		return flag(&req.ContinuousUsage)
	}
	return nil
}

// readError is request.ErrTooLarge for a body past the bound, else a
// malformed form.
func readError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return request.ErrTooLarge
	}
	return fmt.Errorf("invalid multipart form: %v", err)
}

// Clip is what the sim hears of an audio file: its length and the
// transcript its INFO comment carries (llmprobe's test clips').
type Clip wav.File

// ErrInvalid is a file that is not a WAV the sim can read.
var ErrInvalid = wav.ErrInvalid

// Decode reads a WAV file.
func Decode(b []byte) (Clip, error) {
	f, err := wav.Read(b)
	return Clip(f), err
}

// EncoderFramesPerSecond is what Whisper's encoder makes of audio: 1500
// frames for its 30-second window.
const EncoderFramesPerSecond = 50

// EncoderTokens is the prompt the clip costs: its encoder frames, counted
// up.
func (c Clip) EncoderTokens() int {
	return int(ceilDiv(int64(c.Length)*EncoderFramesPerSecond, int64(time.Second)))
}

// Seconds is the clip's length in whole seconds, counted up, as OpenAI's
// duration usage reports it.
func (c Clip) Seconds() int {
	return int(ceilDiv(int64(c.Length), int64(time.Second)))
}

// Words is how many words a speaker at perSecond words a second says in
// the clip, counted up.
func (c Clip) Words(perSecond float64) int {
	// The tolerance keeps a product that is whole but for rounding whole.
	return int(math.Ceil(c.Length.Seconds()*perSecond - 1e-9))
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
