package sim

import (
	"strconv"

	"github.com/alecthomas/kingpin/v2"
)

// AddFlags adds the engine's settings to cmd, with DefaultConfig's defaults.
func AddFlags(cmd *kingpin.CmdClause) *Config {
	d := DefaultConfig()
	c := &Config{Faults: d.Faults}
	cmd.Flag("sim.seed", "Seed of token text and fault draws.").Default(itoa(d.Seed)).Int64Var(&c.Seed)
	cmd.Flag("sim.model", "Model name served.").Default(d.Model).StringVar(&c.Model)
	cmd.Flag("sim.version", "Version /version reports.").Default(d.Version).StringVar(&c.Version)
	cmd.Flag("sim.max-batch", "Running sequences at most.").Default(itoa(int64(d.MaxBatch))).IntVar(&c.MaxBatch)
	cmd.Flag("sim.max-queue", "Waiting requests at most; more are answered 429.").Default(itoa(int64(d.MaxQueue))).IntVar(&c.MaxQueue)
	cmd.Flag("sim.prefill-base", "Fixed cost of a step that admits sequences.").Default(d.PrefillBase.String()).DurationVar(&c.PrefillBase)
	cmd.Flag("sim.prefill-per-token", "Prefill cost per prompt token.").Default(d.PrefillPerToken.String()).DurationVar(&c.PrefillPerToken)
	cmd.Flag("sim.decode-base", "Decode step time with one running sequence.").Default(d.DecodeBase.String()).DurationVar(&c.DecodeBase)
	cmd.Flag("sim.decode-per-seq", "Decode step time added per further running sequence.").Default(d.DecodePerSeq.String()).DurationVar(&c.DecodePerSeq)
	cmd.Flag("sim.default-max-tokens", "Output tokens when a request sets no max_tokens.").Default(itoa(int64(d.DefaultMaxTokens))).IntVar(&c.DefaultMaxTokens)
	cmd.Flag("sim.answer", "Answer text (its words, cycled); empty means vocabulary words.").StringVar(&c.Answer)
	cmd.Flag("sim.error-rate", "Fraction of requests answered with --sim.error-status.").Default("0").Float64Var(&c.Faults.ErrorRate)
	cmd.Flag("sim.error-status", "HTTP status of simulated failures.").Default("500").IntVar(&c.Faults.ErrorStatus)
	cmd.Flag("sim.tokens-per-chunk", "Tokens carried by each streamed chunk.").Default("1").IntVar(&c.Faults.TokensPerChunk)
	cmd.Flag("sim.usage-placement", "Where streamed usage goes: separate, finish or none.").Default(UsageSeparate).EnumVar(&c.Faults.UsagePlacement, UsageSeparate, UsageFinish, UsageNone)
	cmd.Flag("sim.reasoning-tokens", "Leading chat tokens sent as reasoning_content.").Default("0").IntVar(&c.Faults.ReasoningTokens)
	return c
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
