// What a server says it is: the models /v1/models lists, its engine and the
// engine's version, each sanitised and bounded, since they become label
// values.

package prober

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/lib/redact"
)

// Engines that target_info can name (docs/metrics.md lists them); anything else is "unknown", so the label stays bounded.
const (
	engineVLLM     = "vllm"
	engineSGLang   = "sglang"
	engineTGI      = "tgi"
	engineLlamaCPP = "llamacpp"
	engineOllama   = "ollama"
	engineTRTLLM   = "trtllm"
	engineNIM      = "nim"
	// engineTEI is Hugging Face's text-embeddings-inference: it lists no
	// /v1/models, names its model in /info, and ranks on its own /rerank.
	engineTEI     = "tei"
	engineSim     = "llmprobe-sim"
	engineUnknown = "unknown"
)

// Info is what a target says about itself. Every string is sanitised and
// bounded, because it becomes a label value.
type Info struct {
	Models        []string
	Engine        string
	EngineVersion string
	Server        string
	// Confirmed is when the target last answered /v1/models. While it does
	// not, the fields above keep what it said then: a target that is down is
	// still the engine it was.
	Confirmed time.Time
	// ModelsError says why the last /v1/models failed ("" when it answered);
	// ModelsStatus is its HTTP status, 0 when nothing answered.
	ModelsError  string
	ModelsStatus int
}

// infoServer is one target as targetinfo asks it.
type infoServer struct {
	// HTTP is the target's client: its TLS, proxy and credentials.
	HTTP *http.Client
	// Base is the server's root, without /v1.
	Base string
	// Redact masks the target's secrets in what the target sends back.
	Redact *redact.Redactor
}

const maxInfoBody = 1 << 20

// infoStatusError is an info endpoint answering with a status other than 200.
type infoStatusError struct {
	Path   string
	Status int
	// Excerpt is the server's message, masked and bounded.
	Excerpt string
}

func (e *infoStatusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", e.Path, e.Status, http.StatusText(e.Status))
	if e.Excerpt != "" {
		msg += ": " + e.Excerpt
	}
	return msg
}

// Models reads /v1/models: the ids it lists (at most 16, sanitised).
func (s infoServer) Models(ctx context.Context) ([]string, error) {
	models, _, _, err := s.listModels(ctx)
	return models, err
}

func (s infoServer) listModels(ctx context.Context) (models []string, ownedBy string, hdr http.Header, err error) {
	var list modelList
	hdr, err = s.getJSON(ctx, "/v1/models", &list)
	if se, ok := errors.AsType[*infoStatusError](err); ok && se.Status == http.StatusNotFound {
		if tei, teiHdr, teiErr := s.readTEI(ctx); teiErr == nil {
			return []string{tei.ModelID}, engineTEI, teiHdr, nil
		}
	}
	for _, m := range list.Data {
		if id := sanitizeLabel(m.ID, 128); id != "" && len(models) < 16 {
			models = append(models, id)
		}
		if ownedBy == "" {
			ownedBy = strings.ToLower(m.OwnedBy)
		}
	}
	return models, ownedBy, hdr, err
}

// Read reads /v1/models and the engine's version endpoint. When
// /v1/models fails, the Info it returns holds only why (ModelsError and
// ModelsStatus), for the caller to set beside what it knew.
func (s infoServer) Read(ctx context.Context) Info {
	models, ownedBy, hdr, err := s.listModels(ctx)
	if err != nil {
		failed := Info{ModelsError: s.Redact.String(err.Error())}
		if se, ok := errors.AsType[*infoStatusError](err); ok {
			failed.ModelsStatus = se.Status
		}
		return failed
	}
	info := Info{Models: models, Confirmed: time.Now()}
	if hdr != nil {
		info.Server = sanitizeLabel(hdr.Get("Server"), 64)
	}
	info.Engine = detectEngine(ownedBy, info.Server)
	if ownedBy == engineTEI { // read from its /info already, for want of /v1/models
		info.Engine = engineTEI
	}
	info.EngineVersion = s.engineVersion(ctx, &info)
	// What the target says becomes labels and page text: it may echo a secret.
	info.Server, info.EngineVersion = s.Redact.String(info.Server), s.Redact.String(info.EngineVersion)
	for i, m := range info.Models {
		info.Models[i] = s.Redact.String(m)
	}
	return info
}

// engineVersion asks the engine's version endpoint (the likely one first for
// an unknown engine) and falls back to the Server header's "name/version".
func (s infoServer) engineVersion(ctx context.Context, info *Info) string {
	for _, path := range versionPaths(info.Engine) {
		var v struct {
			Version   string `json:"version"`
			Release   string `json:"release"`
			BuildInfo string `json:"build_info"` // llama.cpp /props
			Router    string `json:"router"`     // TGI /info: "text-generation-router"
		}
		vh, err := s.getJSON(ctx, path, &v)
		if err != nil {
			continue
		}
		ver := sanitizeLabel(cmp.Or(v.Version, v.Release, v.BuildInfo), 64)
		if ver == "" {
			continue
		}
		if info.Engine == engineUnknown && vh != nil {
			info.Engine = detectEngine("", sanitizeLabel(vh.Get("Server"), 64))
		}
		// TGI's /v1/models names the model as owner: its /info says what it is.
		if info.Engine == engineUnknown && strings.HasPrefix(v.Router, "text-generation-router") {
			info.Engine = engineTGI
		}
		if info.Engine == engineUnknown && path == "/api/version" {
			info.Engine = engineOllama
		}
		return ver
	}
	// Some engines put their build in the Server header, or nowhere.
	if _, after, ok := strings.Cut(info.Server, "/"); ok {
		return after
	}
	return ""
}

func versionPaths(engine string) []string {
	switch engine {
	case engineVLLM:
		return []string{"/version"}
	case engineOllama:
		return []string{"/api/version"}
	case engineTGI:
		return []string{"/info"}
	case engineSGLang:
		return []string{"/get_server_info", "/version"}
	case engineTEI:
		return []string{"/info"}
	case engineLlamaCPP:
		return []string{"/props"}
	case engineNIM:
		return []string{"/v1/version", "/version"}
	default:
		return []string{"/version", "/api/version", "/info"}
	}
}

func detectEngine(ownedBy, server string) string {
	s := strings.ToLower(server)
	switch {
	case ownedBy == "vllm":
		return engineVLLM
	case ownedBy == "sglang":
		return engineSGLang
	case ownedBy == "llamacpp" || strings.HasPrefix(s, "llama.cpp"):
		return engineLlamaCPP
	case ownedBy == "tgi" || ownedBy == "text-generation-inference" || strings.Contains(s, "text-generation"):
		return engineTGI
	case ownedBy == "tensorrt_llm" || ownedBy == "trtllm" || strings.Contains(s, "tensorrt"):
		return engineTRTLLM
	case ownedBy == "nvidia" || strings.Contains(s, "nim"):
		return engineNIM
	case ownedBy == "library" || ownedBy == "ollama":
		return engineOllama
	case strings.HasPrefix(s, "llmprobe-sim"):
		return engineSim
	}
	return engineUnknown
}

func (s infoServer) getJSON(ctx context.Context, path string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := readError(resp.Body, resp.Body, s.Redact)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxInfoBody))
		return resp.Header, &infoStatusError{Path: path, Status: resp.StatusCode, Excerpt: msg}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxInfoBody)).Decode(v); err != nil {
		return resp.Header, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp.Header, nil
}

// teiInfo is the part of TEI's /info that says it is TEI: a model id and
// type (embedding, reranker, classifier), and no router, which TGI's has.
type teiInfo struct {
	ModelID   string                     `json:"model_id"`
	ModelType map[string]json.RawMessage `json:"model_type"`
	Router    string                     `json:"router"`
}

// readTEI reads /info of a server that lists no /v1/models, and says
// whether it is TEI's.
func (s infoServer) readTEI(ctx context.Context) (teiInfo, http.Header, error) {
	var v teiInfo
	hdr, err := s.getJSON(ctx, "/info", &v)
	if err == nil {
		v.ModelID = sanitizeLabel(v.ModelID, 128)
		if v.ModelID == "" || len(v.ModelType) == 0 || v.Router != "" {
			err = errors.New("GET /info: not text-embeddings-inference's")
		}
	}
	return v, hdr, err
}

var unsafeLabelRe = regexp.MustCompile(`[^A-Za-z0-9_.:/@+=-]`)

// sanitizeLabel keeps network-supplied text short and printable.
func sanitizeLabel(s string, limit int) string {
	s = unsafeLabelRe.ReplaceAllString(strings.TrimSpace(s), "_")
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}
