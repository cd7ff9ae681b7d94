package main

import (
	"context"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/sim"
)

type simCommand struct {
	cmd    *kingpin.CmdClause
	listen *string
	cfg    *sim.Config
	// closeSet: --sim.close-after-stream was given, either way.
	closeSet bool
}

func newSimCommand(app *kingpin.Application) *simCommand {
	cmd := app.Command("sim", "Run the simulated OpenAI-compatible inference engine on its own.")
	c := &simCommand{
		cmd:    cmd,
		listen: cmd.Flag("sim.listen-address", "Address the simulated engine listens on.").Default(":8000").String(),
		cfg:    addSimFlags(cmd),
	}
	cmd.GetFlag("sim.close-after-stream").IsSetByUser(&c.closeSet)
	return c
}

// addSimFlags adds the engine's settings to cmd, with sim.DefaultConfig's defaults.
func addSimFlags(cmd *kingpin.CmdClause) *sim.Config {
	d := sim.DefaultConfig()
	c := &sim.Config{Faults: d.Faults}
	itoa := func(v int) string { return strconv.Itoa(v) }
	cmd.Flag("sim.seed", "Seed of token text and fault draws.").Default(strconv.FormatInt(d.Seed, 10)).Int64Var(&c.Seed)
	cmd.Flag("sim.model", "Model name served.").Default(d.Model).StringVar(&c.Model)
	cmd.Flag("sim.version", "Version the engine's version endpoint reports.").Default(d.Version).StringVar(&c.Version)
	cmd.Flag("sim.engine", "Engine family to pose as (metric names on /metrics and identity): sim (itself, with vLLM's metric names), "+strings.Join(sim.Engines, ", ")+"; or tei, which serves only /v1/embeddings and TEI's /rerank, and no /v1/models.").
		Default("sim").EnumVar(&c.Engine, slices.Concat([]string{"sim"}, sim.Engines, sim.PoolingEngines)...)
	cmd.Flag("sim.max-batch", "Running sequences at most.").Default(itoa(d.MaxBatch)).IntVar(&c.MaxBatch)
	cmd.Flag("sim.max-queue", "Waiting requests at most; more are answered 429.").Default(itoa(d.MaxQueue)).IntVar(&c.MaxQueue)
	cmd.Flag("sim.prefill-base", "Fixed cost of a step that admits sequences.").Default(d.PrefillBase.String()).DurationVar(&c.PrefillBase)
	cmd.Flag("sim.prefill-per-token", "Prefill cost per prompt token.").Default(d.PrefillPerToken.String()).DurationVar(&c.PrefillPerToken)
	cmd.Flag("sim.decode-base", "Decode step time with one running sequence.").Default(d.DecodeBase.String()).DurationVar(&c.DecodeBase)
	cmd.Flag("sim.decode-per-seq", "Decode step time added per further running sequence.").Default(d.DecodePerSeq.String()).DurationVar(&c.DecodePerSeq)
	cmd.Flag("sim.default-max-tokens", "Output tokens when a request sets no max_tokens.").Default(itoa(d.DefaultMaxTokens)).IntVar(&c.DefaultMaxTokens)
	cmd.Flag("sim.answer", "Answer text (its words, cycled); empty means vocabulary words.").StringVar(&c.Answer)
	cmd.Flag("sim.error-rate", "Fraction of requests answered with --sim.error-status.").Default("0").Float64Var(&c.Faults.ErrorRate)
	cmd.Flag("sim.error-status", "HTTP status of simulated failures.").Default("500").IntVar(&c.Faults.ErrorStatus)
	cmd.Flag("sim.tokens-per-chunk", "Tokens carried by each streamed chunk.").Default("1").IntVar(&c.Faults.TokensPerChunk)
	cmd.Flag("sim.per-request-metrics", "Answer requests that set include_metrics with their queue, prefill and decode times, as vLLM does with --enable-per-request-metrics (posing as llama.cpp, its timings object is sent always).").Default(strconv.FormatBool(d.PerRequestMetrics)).BoolVar(&c.PerRequestMetrics)
	cmd.Flag("sim.prefix-cache-tokens", "Prefix cache size in tokens (0: none): leading 16-token blocks an earlier prompt sent cost no prefill, and usage reports them as prompt_tokens_details.cached_tokens, as vLLM's automatic prefix caching does.").Default(itoa(d.PrefixCacheTokens)).IntVar(&c.PrefixCacheTokens)
	cmd.Flag("sim.truth-stamps", "Record when each output chunk was written, per request (by X-Request-Id), and serve them once at GET /sim/truth: the truth benchmarks measure llmprobe's timing against.").BoolVar(&c.TruthStamps)
	cmd.Flag("sim.usage-placement", "Where streamed usage goes: separate, finish or none.").Default(sim.UsageSeparate).EnumVar(&c.Faults.UsagePlacement, sim.UsageSeparate, sim.UsageFinish, sim.UsageNone)
	cmd.Flag("sim.close-after-stream", "Close each connection after a streamed answer while advertising keep-alive, as llama.cpp's server does (on by default with --sim.engine=llamacpp).").BoolVar(&c.Faults.CloseAfterStream)
	cmd.Flag("sim.image-patch", "Side in pixels of the square one image token stands for: an image costs prefill for width/patch × height/patch tokens, each rounded to the nearest and at least 1, counted in usage (28 is Qwen2-VL's 14-pixel patches merged 2×2; 14 counts as a ViT without merging).").Default("28").IntVar(&c.ImagePatch)
	cmd.Flag("sim.golden", "A golden set (llmprobe's JSONL: prompt or messages, checks, answer): a prompt of it, after llmprobe's nonce line, is answered with its reference answer.").PlaceHolder("FILE").StringVar(&c.Golden)
	cmd.Flag("sim.golden.wrong-rate", "Fraction of golden prompts answered wrong instead, drawn from --sim.seed and each request's text.").Default("0").Float64Var(&c.GoldenWrongRate)
	cmd.Flag("sim.audio.words-per-second", "Speaking rate the engine hears in a /v1/audio/transcriptions clip whose WAV carries no transcript in its INFO comment (ICMT): its transcript is that many seeded words per second of audio, counted up (2.5 is 150 words a minute). Within (0, 20].").Default(strconv.FormatFloat(d.WordsPerAudioSecond, 'g', -1, 64)).Float64Var(&c.WordsPerAudioSecond)
	cmd.Flag("sim.spec-decode.draft-tokens", "Poses a draft model that drafts this many tokens a decode step (0: none): the speculative-decoding metrics of the family posed as (vLLM's and llama.cpp's counters, SGLang's gauges) report it. Within [0, 64].").Default("0").IntVar(&c.SpecDecode.DraftTokens)
	cmd.Flag("sim.spec-decode.acceptance-rate", "Share of the draft tokens the target model accepts, with --sim.spec-decode.draft-tokens. Within [0, 1].").Default("0").Float64Var(&c.SpecDecode.Acceptance)
	cmd.Flag("sim.kv-transfer", "Disaggregates prefill: each prompt's KV cache reaches decode this long after its prefill (added to the step that admits it), observed by the family's KV-transfer histogram (vLLM's vllm:nixl_xfer_time_seconds, SGLang's sglang:kv_transfer_latency_ms). 0: none.").Default("0s").DurationVar(&c.KVTransfer)
	cmd.Flag("sim.lora.adapter", "A LoRA adapter served beside the model as a model name of its own, listed by /v1/models with its parent (vLLM's --lora-modules); repeat for more.").StringsVar(&c.Adapters)
	cmd.Flag("sim.lora.prefill", "What a step that admits a request of an adapter costs more (its weights' work), so an adapter is slower than its base.").Default("0s").DurationVar(&c.AdapterPrefill)
	cmd.Flag("sim.audio.word-error-rate", "Fraction of a transcript's words the engine mishears, each replaced by another word, drawn from --sim.seed and each request's arrival: a word error rate of this much against the clip's reference. Within [0, 1].").Default("0").Float64Var(&c.TranscriptWordErrorRate)
	cmd.Flag("sim.reasoning-tokens", "Leading chat tokens sent as reasoning_content, as a reasoning model streams them; usage reports them as completion_tokens_details.reasoning_tokens.").Default("0").IntVar(&c.Faults.ReasoningTokens)
	return c
}

func (c *simCommand) run(logger log.Logger) int {
	// The flag says "sim" for the sim's own identity, which sim.Config calls "".
	if c.cfg.Engine == "sim" {
		c.cfg.Engine = ""
	}
	if c.cfg.Engine == "llamacpp" && !c.closeSet {
		c.cfg.Faults.CloseAfterStream = true // the quirk of the family it poses as
	}
	engine, err := sim.New(*c.cfg)
	if err != nil {
		level.Error(logger).Log("msg", "invalid simulator settings", "err", err)
		return 2
	}
	defer engine.Close()
	ln, err := net.Listen("tcp", *c.listen)
	if err != nil {
		level.Error(logger).Log("msg", "simulated engine cannot listen", "address", *c.listen, "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	level.Info(logger).Log("msg", "simulated engine listening", "address", ln.Addr().String(), "model", c.cfg.Model)
	if err := engine.Serve(ctx, ln); err != nil {
		level.Error(logger).Log("msg", "simulated engine failed", "err", err)
		return 1
	}
	return 0
}
