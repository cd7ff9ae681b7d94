package quality

// ToolCall is one function call of an answer.
type ToolCall struct {
	Name string
	// Arguments is the JSON text the model wrote, as it came (bounded).
	Arguments string
	// Cut: the arguments ran past what is kept, so they are not all here.
	Cut bool
}

// MaxArgumentBytes bounds what one answer's calls make the prober hold:
// all calls' arguments together.
const MaxArgumentBytes = 64 << 10
