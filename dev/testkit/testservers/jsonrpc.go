package testservers

import (
	"encoding/json"
	"net/http"
)

// ReadRequest decodes the JSON-RPC message an MCP client POSTs, for test
// servers of our own (fault and echo servers); anything else is answered
// 400 Bad Request and ok is false.
func ReadRequest(w http.ResponseWriter, r *http.Request) (id json.RawMessage, method string, ok bool) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return nil, "", false
	}
	return req.ID, req.Method, true
}
