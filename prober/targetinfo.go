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

	"github.com/prometheus/common/version"
)

var userAgent = "llmprobe/" + version.Version

// Engines that target_info can name (docs/metrics.md lists them); anything else is "unknown", so the label stays bounded.
const (
	engineVLLM     = "vllm"
	engineSGLang   = "sglang"
	engineTGI      = "tgi"
	engineLlamaCPP = "llamacpp"
	engineOllama   = "ollama"
	engineTRTLLM   = "trtllm"
	engineNIM      = "nim"
	engineSim      = "llmprobe-sim"
	engineUnknown  = "unknown"
)

// TargetInfo is what a target says about itself. Every string is sanitised and
// bounded, because it becomes a label value.
type TargetInfo struct {
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

// Info returns the last TargetInfo read.
func (c *Client) Info() TargetInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

const maxInfoBody = 1 << 20

// statusError is an info endpoint answering with a status other than 200.
type statusError struct {
	path    string
	status  int
	excerpt string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", e.path, e.status, http.StatusText(e.status))
	if e.excerpt != "" {
		msg += ": " + e.excerpt
	}
	return msg
}

type modelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// listModels reads /v1/models.
func (c *Client) listModels(ctx context.Context) (models []string, ownedBy string, hdr http.Header, err error) {
	var list modelList
	hdr, err = c.getJSON(ctx, "/v1/models", &list)
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

// RefreshInfo reads /v1/models and the engine's version endpoint. When
// /v1/models fails, the last known facts stay, with the reason beside them.
func (c *Client) RefreshInfo(ctx context.Context) TargetInfo {
	ctx, cancel := context.WithTimeout(ctx, min(c.target.Timeout.Std(), 10*time.Second))
	defer cancel()
	models, ownedBy, hdr, err := c.listModels(ctx)
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.info.ModelsError, c.info.ModelsStatus = c.redactText(err.Error()), 0
		var se *statusError
		if errors.As(err, &se) {
			c.info.ModelsStatus = se.status
		}
		return c.info
	}
	info := TargetInfo{Models: models, Confirmed: time.Now()}
	if hdr != nil {
		info.Server = sanitizeLabel(hdr.Get("Server"), 64)
	}
	info.Engine = detectEngine(ownedBy, info.Server)
	info.EngineVersion = c.engineVersion(ctx, &info)
	// What the target says becomes labels and page text: it may echo a secret.
	info.Server, info.EngineVersion = c.redactText(info.Server), c.redactText(info.EngineVersion)
	for i, m := range info.Models {
		info.Models[i] = c.redactText(m)
	}
	c.mu.Lock()
	c.info = info
	c.mu.Unlock()
	return info
}

// engineVersion asks the engine's version endpoint (the likely one first for
// an unknown engine) and falls back to the Server header's "name/version".
func (c *Client) engineVersion(ctx context.Context, info *TargetInfo) string {
	for _, path := range versionPaths(info.Engine) {
		var v struct {
			Version   string `json:"version"`
			Release   string `json:"release"`
			BuildInfo string `json:"build_info"` // llama.cpp /props
			Router    string `json:"router"`     // TGI /info: "text-generation-router"
		}
		vh, err := c.getJSON(ctx, path, &v)
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

func (c *Client) getJSON(ctx context.Context, path string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := c.readErrorBody(resp.Body)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxInfoBody))
		return resp.Header, &statusError{path: path, status: resp.StatusCode, excerpt: msg}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxInfoBody)).Decode(v); err != nil {
		return resp.Header, fmt.Errorf("GET %s: %w", path, err)
	}
	return resp.Header, nil
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
