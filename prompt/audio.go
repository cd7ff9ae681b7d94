// The audio a transcription request uploads: synthetic WAVs made from the
// request's seed while they are sent (no copy held), or the clips of a
// dataset read and bounded when the configuration loads.

package prompt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/wav"
	"github.com/llmprobe/llmprobe/quality"
)

// Clip is one audio file of a dataset, read whole at load, and the
// transcript its speech is.
type Clip struct {
	ID        string // optional; named with Line in a failed check
	Line      int    // of the dataset
	File      string // as the line names it
	WAV       []byte
	Seconds   float64
	Reference string
}

// Name is how a failed check names the clip: "clip line 3 (jfk)".
func (c *Clip) Name() string {
	if c.ID == "" {
		return fmt.Sprintf("clip line %d", c.Line)
	}
	return fmt.Sprintf("clip line %d (%s)", c.Line, c.ID)
}

// Synthetic audio: 16 kHz mono 16-bit PCM, Whisper's own input format, so
// no engine resamples it.
const SampleRate = 16000

// SyntheticSize is the bytes of a synthetic WAV of seconds.
func SyntheticSize(seconds float64) int64 {
	return wav.HeaderBytes + 2*syntheticSamples(seconds)
}

func syntheticSamples(seconds float64) int64 { return int64(math.Round(seconds * SampleRate)) }

// Synthetic is a WAV of seconds made from seed as it is read: every
// request's audio differs, a burst repeats with its seed, and a request
// holds none of it. Its sound is syllable-like tone bursts and pauses, not
// speech: it loads an engine's audio encoder and decoder as speech of its
// length does, and the words it is heard as do not matter.
func Synthetic(seed uint64, seconds float64) io.Reader {
	n := syntheticSamples(seconds)
	return &synthetic{header: wav.Header(n, SampleRate), left: n, rng: rand.New(rand.NewPCG(seed, 0xa0d10))}
}

// synthetic writes its header, then samples: syllables of 60 to 300 ms at a
// seeded pitch under a rising and falling envelope, and pauses between.
type synthetic struct {
	header     [wav.HeaderBytes]byte
	headerDone int
	left       int64 // samples still to write
	rng        *rand.Rand
	// The current syllable or pause: samples left of it, its length, its
	// pitch as a phase step, and where the phase is.
	segLeft, segLen int
	step, phase     float64
	silent          bool
}

func (s *synthetic) Read(p []byte) (int, error) {
	n := 0
	if s.headerDone < wav.HeaderBytes {
		n = copy(p, s.header[s.headerDone:])
		s.headerDone += n
	}
	for ; n+1 < len(p) && s.left > 0; n += 2 {
		binary.LittleEndian.PutUint16(p[n:], uint16(s.sample()))
		s.left--
	}
	if n == 0 && s.left == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (s *synthetic) sample() int16 {
	if s.segLeft == 0 {
		s.silent = !s.silent
		ms := 60 + s.rng.IntN(240)
		if s.silent {
			ms = 20 + s.rng.IntN(120)
		}
		s.segLen = ms * SampleRate / 1000
		s.segLeft = s.segLen
		s.step = 2 * math.Pi * (120 + 280*s.rng.Float64()) / SampleRate
	}
	s.segLeft--
	if s.silent {
		return int16(s.rng.IntN(64) - 32) // room noise
	}
	s.phase += s.step
	at := float64(s.segLen-s.segLeft) / float64(s.segLen)
	envelope := math.Sin(math.Pi * at)
	// A fundamental and two harmonics, as a voiced vowel has.
	v := math.Sin(s.phase) + 0.5*math.Sin(2*s.phase) + 0.25*math.Sin(3*s.phase)
	return int16(6000 * envelope * v)
}

// Bounds of audio datasets: a clip is read whole and held, as OpenAI bounds
// an upload at 25 MB; past a bound a file is refused, not cut.
const (
	maxClipBytes      = 25 << 20
	maxClipsBytes     = 64 << 20 // every clip of every dataset, as golden sets and datasets are bounded
	maxAudioLines     = 10_000
	maxAudioLineBytes = 1 << 20
	maxAudioFileBytes = 16 << 20
	maxReferenceBytes = 64 << 10
)

// readAudio reads every scenario's audio dataset, by the scenario's
// index, or says what is wrong with it: each line at fault with its file,
// line and field.
func readAudio(c *config.Config) (map[int][]Clip, config.FieldErrors) {
	total := int64(0)
	return readEach(c, func(s *config.Scenario) (string, string) {
		if s.Audio == nil {
			return "", ""
		}
		return s.Audio.Dataset, "audio.dataset"
	}, func(file string) ([]Clip, []string) { return readClips(file, &total) })
}

// clipJSON is one line of an audio dataset as written.
type clipJSON struct {
	ID        *string `json:"id"`
	Audio     string  `json:"audio"`
	Reference *string `json:"reference"`
}

// audioDataset is an audio dataset's kind of file.
var audioDataset = jsonlFile{what: "an audio dataset", item: "clip", fileBytes: maxAudioFileBytes, lineBytes: maxAudioLineBytes, items: maxAudioLines}

// readClips reads a dataset and each clip it names, adding their bytes to
// total, or every problem of the file (jsonlFile.read).
func readClips(file string, total *int64) ([]Clip, []string) {
	var clips []Clip
	ids := map[string]int{}
	errs := audioDataset.read(file, func(raw []byte, n int) []string {
		clip, problems := readClipLine(raw, n, filepath.Dir(file), ids, total)
		if len(problems) == 0 {
			clips = append(clips, clip)
		}
		return problems
	})
	if len(errs) > 0 {
		return nil, errs
	}
	return clips, nil
}

// readClipLine reads line n of a dataset in dir and the WAV it names.
func readClipLine(raw []byte, n int, dir string, ids map[string]int, total *int64) (Clip, []string) {
	var j clipJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil || dec.More() {
		why := "holds more than one JSON value"
		if err != nil {
			why = strings.TrimPrefix(jsonMessage(err), "json: ")
		}
		return Clip{}, []string{`not a clip line (a JSON object {"id", "audio", "reference"}): ` + why}
	}
	c := Clip{Line: n, File: j.Audio}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if j.ID != nil {
		c.ID = *j.ID
		switch first, dup := ids[c.ID]; {
		case !printable(c.ID) || len(c.ID) > maxGoldenID:
			add("id: %s must be 1 to %d printable characters", quality.Quote(c.ID), maxGoldenID)
		case dup:
			add("id: %s repeats the id of line %d", quality.Quote(c.ID), first)
		default:
			ids[c.ID] = n
		}
	}
	switch {
	case j.Reference == nil:
		add("reference: is required: the clip's transcript, which its word error rate is counted against")
	case len(quality.Words(*j.Reference)) == 0:
		add("reference: has no word")
	case len(*j.Reference) > maxReferenceBytes:
		add("reference: %d bytes must be at most %s", len(*j.Reference), config.Bytes(maxReferenceBytes))
	default:
		c.Reference = *j.Reference
	}
	if j.Audio == "" {
		add("audio: is required: a WAV file's path, relative to the dataset's directory")
		return c, problems
	}
	path := j.Audio
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	var err error
	if c.WAV, c.Seconds, err = readWAV(path, total); err != nil {
		add("audio: %v", err)
	}
	return c, problems
}

// readWAV reads a WAV file whole, adding its size to total, and its length
// in seconds.
func readWAV(path string, total *int64) ([]byte, float64, error) {
	f, err := openBounded(path, maxClipBytes, "an audio clip", "; cut it into shorter clips")
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxClipBytes+1))
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	case len(b) > maxClipBytes:
		return nil, 0, fmt.Errorf("%s is past %s, OpenAI's upload limit; cut it into shorter clips", path, config.Bytes(maxClipBytes))
	}
	if *total += int64(len(b)); *total > maxClipsBytes {
		return nil, 0, fmt.Errorf("%s brings the clips to %d bytes, past %d MiB in all", path, *total, maxClipsBytes>>20)
	}
	seconds, err := WAVSeconds(b)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	if seconds < config.MinAudioSeconds || seconds > config.MaxAudioSeconds {
		return nil, 0, fmt.Errorf("%s lasts %.2fs; a clip must last %gs to %gs", path, seconds, config.MinAudioSeconds, float64(config.MaxAudioSeconds))
	}
	return b, seconds, nil
}

// WAVSeconds is how long the WAV file b lasts; an error says why b is no
// PCM WAV (llmprobe reads only WAV).
func WAVSeconds(b []byte) (float64, error) {
	f, err := wav.Read(b)
	return f.Length.Seconds(), err
}

// AudioOf is the audio request p of a scenario with a (nil: none)
// uploads, its size and length: p's clip, else a synthetic WAV seeded by
// p's text (its nonce). open is nil without audio.
func AudioOf(a *config.Audio, p Prompt) (open func() io.Reader, size int64, seconds float64) {
	switch {
	case p.Clip != nil:
		return func() io.Reader { return bytes.NewReader(p.Clip.WAV) }, int64(len(p.Clip.WAV)), p.Clip.Seconds
	case a == nil || a.Seconds == 0:
		return nil, 0, 0
	}
	seed := ImageSeed(p.Text)
	return func() io.Reader { return Synthetic(seed, a.Seconds) }, SyntheticSize(a.Seconds), a.Seconds
}
