package prober

import (
	"context"
	"encoding/json"
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
	ModelsError   string
	Engine        string
	EngineVersion string
	Server        string
	Updated       time.Time
}

// Info returns the last TargetInfo read.
func (c *Client) Info() TargetInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

const maxInfoBody = 1 << 20

// RefreshInfo reads /v1/models and the engine's version endpoints.
func (c *Client) RefreshInfo(ctx context.Context) TargetInfo {
	ctx, cancel := context.WithTimeout(ctx, min(c.target.Timeout.Std(), 10*time.Second))
	defer cancel()
	var info TargetInfo
	var models struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	hdr, err := c.getJSON(ctx, "/v1/models", &models)
	if err != nil {
		info.ModelsError = err.Error()
	}
	ownedBy := ""
	for _, m := range models.Data {
		if id := sanitizeLabel(m.ID, 128); id != "" && len(info.Models) < 16 {
			info.Models = append(info.Models, id)
		}
		if ownedBy == "" {
			ownedBy = strings.ToLower(m.OwnedBy)
		}
	}
	if hdr != nil {
		info.Server = sanitizeLabel(hdr.Get("Server"), 64)
	}
	info.Engine = detectEngine(ownedBy, info.Server)

	// Version endpoints differ per engine; ask the likely one first.
	for _, path := range versionPaths(info.Engine) {
		var v struct {
			Version string `json:"version"`
			Release string `json:"release"`
		}
		vh, err := c.getJSON(ctx, path, &v)
		if err != nil {
			continue
		}
		ver := v.Version
		if ver == "" {
			ver = v.Release
		}
		if ver = sanitizeLabel(ver, 64); ver != "" {
			info.EngineVersion = ver
			if info.Engine == engineUnknown && vh != nil {
				info.Engine = detectEngine("", sanitizeLabel(vh.Get("Server"), 64))
			}
			if info.Engine == engineUnknown && path == "/api/version" {
				info.Engine = engineOllama
			}
			break
		}
	}
	if info.EngineVersion == "" && info.Server != "" {
		// llama.cpp and others put the build in the Server header or nowhere.
		if _, after, ok := strings.Cut(info.Server, "/"); ok {
			info.EngineVersion = after
		}
	}
	info.Updated = time.Now()
	c.mu.Lock()
	c.info = info
	c.mu.Unlock()
	return info
}

func versionPaths(engine string) []string {
	switch engine {
	case engineOllama:
		return []string{"/api/version"}
	case engineTGI:
		return []string{"/info"}
	case engineNIM:
		return []string{"/v1/version", "/version"}
	case engineLlamaCPP:
		return nil
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
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxInfoBody))
		return resp.Header, fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
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
