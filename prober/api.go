package prober

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
)

// An api is one request type of a server as llmprobe speaks it: where a
// request goes, the body it sends, how its answer is read (streamed, or in
// one body) and which figures the answer has. Each is one file of this
// package, found by the target's `api:` in apis; the client, the transport
// and the measurement are the same for all of them.
type api interface {
	// path is the request's endpoint below the server's root.
	path(d dialect) string
	// body is request r's body for model, with extra (the target's
	// extra_body) beneath the fields it sets.
	body(model string, r Request, extra map[string]any, d dialect) (payload, error)
	// event reads one event of a streamed answer into c; done is true for
	// the event that ends the stream. An error comes with its reason.
	event(ev sse.Event, c *streamChunk) (done bool, reason string, err error)
	// whole reads an answer that came in one body (h is its header), each
	// text kept to keep bytes. An answer that fails a check is an
	// *AnswerProblem with its reason.
	whole(body io.Reader, h http.Header, r Request, keep int, d dialect) (*answer, error)
	// traits says what its answers are.
	traits() traits
}

// apis is every API llmprobe measures, by the target's `api:`.
var apis = map[config.API]api{
	config.APIChat:           chat{},
	config.APICompletions:    completions{},
	config.APIResponses:      responses{},
	config.APIMessages:       anthropicMessages{},
	config.APIEmbeddings:     embeddings{},
	config.APIRerank:         rerank{},
	config.APITranscriptions: transcriptions{},
}

// headerAPI is an API whose requests carry headers of their own, each
// set unless the target's http_headers name it.
type headerAPI interface {
	headers() map[string]string
}

// oneBodyHint is an API some servers answer in one JSON body whatever the
// request's stream says: its hint says what to do.
type oneBodyHint interface {
	oneBodyHint() string
}

// apiOf is the API named; chat, the configuration's default, for an empty
// name.
func apiOf(name config.API) api {
	if a, ok := apis[name]; ok {
		return a
	}
	return apis[config.APIChat]
}

// traits are what an API's answers are, and so which figures apply.
type traits struct {
	// tokens: the answer is output tokens, streamed unless the scenario
	// says stream: false (TTFT, ITL and TPOT apply to a stream); otherwise
	// it is one body of vectors or ranks, whose one latency is e2e.
	tokens bool
	// final is the event that must end a stream ("" where a finish_reason
	// or [DONE] ends it).
	final string
	// dialects: a server's kind (TEI) changes where and how it is asked,
	// so the client reads what the server is before its first request.
	dialects bool
}

// dialect is what the server is, where an API is spoken differently by
// one kind of server.
type dialect struct {
	// tei: Hugging Face's text-embeddings-inference, which ranks on its
	// own /rerank in its own shapes.
	tei bool
}

// payload is a request's body, opened afresh for each send (GetBody), its
// size, what it asks for in the log's words, and the prompt tokens it asks
// the server to process; a form's content type ("" for JSON) and the
// seconds of audio it uploads.
type payload struct {
	open         func() io.Reader
	size         int64
	asks         string
	promptTokens int
	contentType  string
	audioSeconds float64
}

// answer is what an answer in one body says.
type answer struct {
	// Texts, kept to the bound they were read with, tool calls, how the
	// answer finished and its usage: the answers of tokens.
	Content, Reasoning string
	// Refusal is the model's refusal, which is no answer (ending.go).
	Refusal      string
	ToolCalls    []wholeToolCall
	FinishReason string
	Model        string // the model the answer names
	// usage is nil when the answer reported none; TextTokens is then what
	// its texts and tool-call arguments come to by prompt.EstimateTokens,
	// counted before any was cut, and ReasoningTextTokens the reasoning's
	// share of it.
	usage                           *usage
	TextTokens, ReasoningTextTokens int
	// The engine's own timings of the request, raw (see ParseVLLMMetrics).
	Metrics, Timings json.RawMessage

	// Inputs is the vectors or ranks of an embeddings or rerank answer;
	// Dimension the vectors' length (0 for rerank); InputTokens the usage's
	// prompt tokens (else its total tokens), 0 for none.
	Inputs, Dimension, InputTokens int
}
