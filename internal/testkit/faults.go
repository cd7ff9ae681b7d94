package testkit

import (
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fault is one way a target breaks, and what the prober says of it: the
// failure catalogue that the daemon's and the gate's tests both run.
type Fault struct {
	Name string
	// URL starts the broken target for the test and returns its URL.
	URL func(t *testing.T) string
	// Discover leaves the model out of the configuration: /v1/models finds it.
	Discover bool
	// Outcome, Phase and Reason are what its requests end with; In is a
	// piece of their error text.
	Outcome, Phase, Reason, In string
	// API is the target's; empty means completions.
	API string
	// Scenario is more of scenario s's fields, in YAML's flow style
	// ("stream: false"), for a fault its requests must ask for.
	Scenario string
}

// FaultConfig is a configuration of target "faulty" at url with a 1 s
// timeout, and burst "catalogue" of six requests against it.
func FaultConfig(f Fault, url string) string {
	model := "\n    model: m"
	if f.Discover {
		model = ""
	}
	api, slo, scenario := "completions", "ttft: 500ms", ""
	if f.API != "" {
		api, slo = f.API, "e2e: 500ms"
	}
	if f.Scenario != "" {
		scenario = ", " + f.Scenario
	}
	return fmt.Sprintf(`targets:
  - name: faulty
    url: %q%s
    api: %s
    timeout: 1s
scenarios:
  - {name: s, prompt_tokens: 8, output_tokens: 4, inputs: 4, slo: {%s, target_ratio: 0.9}%s}
canary: {interval: 200ms}
bursts:
  - {name: catalogue, target: faulty, scenarios: [{scenario: s}], arrival: {process: constant, rate: 20}, requests: 6, schedule: {on_start: true}}
`, url, model, api, slo, scenario)
}

// okChunk is one completions chunk of one token.
const okChunk = `data: {"choices":[{"index":0,"text":" tok","finish_reason":null}]}` + "\n\n"

// EventStream starts an answer of server-sent events.
func EventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// WaitForClient reads the request and holds the answer until the client
// gives up.
func WaitForClient(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// FaultServer answers /v1/models like an engine, and every other request
// with the fault.
func FaultServer(t testing.TB, fault http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","owned_by":"vllm"}]}`)
			return
		}
		fault(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Faults is the failure catalogue: every way a target breaks that the
// prober tells apart.
func Faults() []Fault {
	return slices.Concat(answerFaults(), streamFaults(), embeddingFaults(), unstreamedFaults(), apiFaults())
}

// RefusedURL is the URL of a port nothing listens on.
func RefusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "http://" + ln.Addr().String()
}

// answerFaults break a request before its first token: no connection, no
// trust, no end of redirects, an error status.
func answerFaults() []Fault {
	return []Fault{
		{"refused", RefusedURL, false, "connection_error", "connect", "connection_refused", "connection refused", "", ""},
		{"429 with Retry-After", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				http.Error(w, `{"error":{"message":"queue full"}}`, http.StatusTooManyRequests)
			}).URL
		}, false, "rejected", "headers", "http_status", "HTTP 429 Too Many Requests, Retry-After 7: queue full", "", ""},
		{"503 with Retry-After", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "30")
				http.Error(w, `{"error":{"message":"draining"}}`, http.StatusServiceUnavailable)
			}).URL
		}, false, "rejected", "headers", "http_status", "HTTP 503 Service Unavailable, Retry-After 30: draining", "", ""},
		{"500 with a body", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"CUDA out of memory"}}`, http.StatusInternalServerError)
			}).URL
		}, false, "http_error", "headers", "http_status", "HTTP 500 Internal Server Error: CUDA out of memory", "", ""},
		{"TLS failure", func(t *testing.T) string {
			srv := httptest.NewUnstartedServer(http.NotFoundHandler())
			srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
			srv.StartTLS() // a certificate no one trusts
			t.Cleanup(srv.Close)
			return srv.URL
		}, false, "connection_error", "tls", "tls_error", "certificate", "", ""},
		{"redirect loop", func(t *testing.T) string {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, false, "connection_error", "headers", "redirect_loop", "redirects", "", ""},
		{"401 on discovery", func(t *testing.T) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"invalid API key"}}`, http.StatusUnauthorized)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, true, "http_error", "discovery", "http_status", "GET /v1/models: HTTP 401 Unauthorized: invalid API key", "", ""},
	}
}

// streamFaults break the answer's stream.
func streamFaults() []Fault {
	return []Fault{
		{"reset mid-stream", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(okChunk), okChunk)
				_ = buf.Flush()
				_ = conn.Close()
			}).URL
		}, false, "stream_error", "stream", "stream_cut", "unexpected EOF", "", ""},
		{"headers then silence", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) { EventStream(w); WaitForClient(r) }).URL
		}, false, "timeout", "stream", "deadline", "0 output tokens in", "", ""},
		{"slow drip", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				for {
					fmt.Fprint(w, okChunk)
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(400 * time.Millisecond):
					}
				}
			}).URL
		}, false, "timeout", "stream", "deadline", "output tokens in", "", ""},
		{"empty choices forever", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				for range 50 {
					fmt.Fprint(w, "data: {\"choices\":[]}\n\n")
				}
				fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			}).URL
		}, false, "stream_error", "stream", "no_output", "without an output token", "", ""},
		{"no [DONE]", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) { EventStream(w); fmt.Fprint(w, okChunk+okChunk) }).URL
		}, false, "stream_error", "stream", "no_finish", "neither finish_reason nor [DONE]", "", ""},
		{"malformed JSON", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				fmt.Fprint(w, okChunk+"data: {\"choices\": [\n\n")
			}).URL
		}, false, "stream_error", "stream", "malformed_chunk", "malformed chunk", "", ""},
		{"a 1 MiB line", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				fmt.Fprint(w, okChunk+"data: "+strings.Repeat("x", 1<<20+10)+"\n\n")
			}).URL
		}, false, "stream_error", "stream", "line_too_long", "too long", "", ""},
		{"tokens beyond max_tokens", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				for range 20000 {
					if _, err := fmt.Fprint(w, okChunk); err != nil {
						return
					}
				}
			}).URL
		}, false, "stream_error", "stream", "max_tokens_exceeded", "does not honour max_tokens", "", ""},
	}
}

// embeddingFaults are embeddings answers that fail their checks.
func embeddingFaults() []Fault {
	answer := func(vectors string) func(t *testing.T) string {
		return func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"object":"list","data":[%s],"usage":{"prompt_tokens":32}}`, vectors)
			}).URL
		}
	}
	v := func(e string) string { return `{"object":"embedding","embedding":` + e + `}` }
	return []Fault{
		{"embeddings: wrong count", answer(v("[1,2]") + "," + v("[1,2]")), false, "stream_error", "stream", "embeddings_count", "2 of 4 vectors", "embeddings", ""},
		{"embeddings: ragged", answer(strings.Join([]string{v("[1,2]"), v("[1,2]"), v("[1,2,3]"), v("[1,2]")}, ",")), false, "stream_error", "stream", "embeddings_dimension", "dimensions 2 and 3", "embeddings", ""},
		{"embeddings: NaN", answer(strings.Join([]string{v("[1,2]"), v(`[1,"NaN"]`), v("[1,2]"), v("[1,2]")}, ",")), false, "stream_error", "stream", "embeddings_not_finite", `"NaN" at data[1].embedding[1]`, "embeddings", ""},
	}
}

// answerWith starts a target that answers every request with body, of
// content type ct.
func answerWith(ct, body string) func(t *testing.T) string {
	return func(t *testing.T) string {
		return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			fmt.Fprint(w, body)
		}).URL
	}
}

// unstreamedFaults are answers to requests with stream: false, or with
// images, that the prober fails.
func unstreamedFaults() []Fault {
	answer := answerWith
	const unstreamed = "stream: false"
	return []Fault{
		{"unstreamed: not JSON", answer("application/json", "<html>502 Bad Gateway</html>"), false, "stream_error", "stream", "answer_not_json", "the answer is not JSON", "chat", unstreamed},
		{"unstreamed: no choices", answer("application/json", `{"object":"chat.completion","choices":[]}`), false, "stream_error", "stream", "answer_no_choices", "no choices", "chat", unstreamed},
		{"unstreamed: empty content", answer("application/json", `{"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`), false, "stream_error", "stream", "no_output", "no content, reasoning or tool call", "chat", unstreamed},
		{"unstreamed: an event stream", answer("text/event-stream", `data: {"choices":[{"delta":{"content":"hi"}}]}`+"\n\n"), false, "stream_error", "headers", "unasked_event_stream", "stream: false", "chat", unstreamed},
		// vLLM's answer to an image it cannot decode (since vllm#38253: 400, not 500).
		{"image refused", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if !strings.Contains(string(body), `"type":"image_url"`) {
					http.Error(w, `{"error":{"message":"the fault wants image_url parts"}}`, http.StatusTeapot)
					return
				}
				http.Error(w, `{"object":"error","message":"Failed to load image: cannot identify image file","type":"BadRequestError","param":null,"code":400}`, http.StatusBadRequest)
			}).URL
		}, false, "http_error", "headers", "http_status", "HTTP 400 Bad Request: Failed to load image: cannot identify image file", "chat", "images: {count: 1, width: 32, height: 32}"},
	}
}

// apiFaults break the Responses and Messages APIs' typed events,
// transcriptions, and rerank answers, in the OpenAI-style shape and in TEI's.
func apiFaults() []Fault {
	// events answers with Responses API events, each its type and the
	// rest of its JSON object.
	events := func(evs ...[2]string) func(t *testing.T) string {
		return func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				EventStream(w)
				for _, ev := range evs {
					fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q%s}\n\n", ev[0], ev[0], ev[1])
				}
			}).URL
		}
	}
	body := answerWith
	delta := [2]string{"response.output_text.delta", `,"delta":" tok"`}
	msgStart := [2]string{"message_start", `,"message":{"type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":8,"output_tokens":1}}`}
	msgText := [2]string{"content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":" tok"}`}
	msgEnd := [2]string{"message_delta", `,"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}`}
	msgError := [2]string{"error", `,"error":{"type":"overloaded_error","message":"Overloaded"}`}
	failed := [2]string{"response.failed", `,"response":{"status":"failed","error":{"code":"server_error","message":"CUDA out of memory"}}`}
	return []Fault{
		{"responses: no response.completed", events(delta, delta), false, "stream_error", "stream", "no_finish", "stream ended without response.completed", "responses", ""},
		{"responses: response.failed", events(delta, failed), false, "stream_error", "stream", "error_in_stream", "response.failed event: server_error: CUDA out of memory", "responses", ""},
		{"messages: no message_stop", events(msgStart, msgText, msgText, msgEnd), false, "stream_error", "stream", "no_finish", "stream ended without message_stop", "messages", ""},
		{"messages: error event", events(msgStart, msgText, msgError), false, "stream_error", "stream", "error_in_stream", "error event: overloaded_error: Overloaded", "messages", ""},
		{"transcriptions: not JSON", body("application/json", `<html>502 Bad Gateway</html>`), false, "stream_error", "stream", "transcript_not_json", "the transcription answer is not JSON", "transcriptions", "stream: false, audio: {seconds: 1}"},
		{"transcriptions: empty transcript", body("application/json", `{"text":"","usage":{"type":"duration","seconds":1}}`), false, "stream_error", "stream", "transcript_empty", "the transcript is empty", "transcriptions", "stream: false, audio: {seconds: 1}"},
		{"transcriptions: error event", body("text/event-stream", "data: {\"type\":\"transcript.text.delta\",\"delta\":\" ask\"}\n\ndata: {\"type\":\"error\",\"error\":{\"message\":\"audio decoding failed\"}}\n\n"), false, "stream_error", "stream", "error_in_stream", "error event: audio decoding failed", "transcriptions", "audio: {seconds: 1}"},
		{"rerank: wrong count", func(t *testing.T) string {
			return FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"results":[{"index":0,"relevance_score":0.9},{"index":1,"relevance_score":0.1}]}`)
			}).URL
		}, false, "stream_error", "stream", "rerank_count", "2 of 3 results", "rerank", "documents: 3"},
		// TEI lists no /v1/models: its /info says what it serves.
		{"rerank on TEI: NaN score", func(t *testing.T) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/info":
					fmt.Fprint(w, `{"model_id":"m","model_type":{"reranker":{}},"version":"1.8.0"}`)
				case "/rerank":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `[{"index":2,"score":0.9},{"index":0,"score":"NaN"},{"index":1,"score":0.1}]`)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, true, "stream_error", "stream", "rerank_not_finite", `score "NaN" at results[1]`, "rerank", "documents: 3"},
	}
}
