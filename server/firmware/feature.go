package firmware

import (
	"encoding/json"
	"net/http"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
)

// Register offers r to the nodes and the API on h: the bus services
// msg.ServiceFirmwareCheck and msg.ServiceFirmwareDownload, and behind the
// API token GET /api/firmware (the repository's Status), POST
// /api/firmware (UploadHandler with upload) and the tree under
// /api/firmware/.
func Register(h *feature.Host, r *Repository, upload UploadOptions) {
	feature.Serve(h, msg.ServiceFirmwareCheck, func(req msg.FirmwareCheckRequest, reply func(msg.FirmwareCheckResponse, error)) {
		reply(r.Check(req), nil)
	})
	feature.Serve(h, msg.ServiceFirmwareDownload, func(req msg.FirmwareDownloadRequest, reply func(msg.FirmwareDownloadResponse, error)) {
		// Disk reads stay off the executor.
		go func() { reply(r.Download(req), nil) }()
	})
	h.HandleHTTP("/api/firmware/", http.StripPrefix("/api", r.Handler()))
	h.HandleHTTP("GET /api/firmware", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.Status())
	}))
	h.HandleHTTP("POST /api/firmware", r.UploadHandler(upload))
}
