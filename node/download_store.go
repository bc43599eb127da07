package node

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/persist"
)

// A firmware download in progress is kept on disk, so that a node that
// loses power or restarts halfway resumes where it stopped rather than
// fetching the whole image again.
const (
	downloadPart   = "firmware/download.part"
	downloadRecord = "firmware/download.yaml"
)

// downloadInfo is download.yaml: which image download.part is the start of.
type downloadInfo struct {
	Version  string `yaml:"version"`
	Checksum string `yaml:"checksum_sha256"`
	Size     int64  `yaml:"size_bytes"`
}

// PartialDownload returns the part of image version (with checksum and
// size) already downloaded, or nothing when the part on disk belongs to
// another image.
func (s *Store) PartialDownload(version, checksum string, size int64) []byte {
	var rec downloadInfo
	data, err := os.ReadFile(s.path(downloadRecord))
	if err != nil || yaml.Unmarshal(data, &rec) != nil {
		return nil
	}
	if rec.Version != version || !strings.EqualFold(rec.Checksum, checksum) || rec.Size != size {
		return nil
	}
	part, err := os.ReadFile(s.path(downloadPart))
	if err != nil || int64(len(part)) > size {
		return nil
	}
	return part
}

// AppendDownload adds data at offset to the download of version. The first
// chunk (offset 0) starts a new part; a chunk that does not continue the
// part on disk is an error (the caller then starts again from 0).
func (s *Store) AppendDownload(version, checksum string, size, offset int64, data []byte) error {
	if offset == 0 {
		rec, err := yaml.Marshal(downloadInfo{Version: version, Checksum: checksum, Size: size})
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		if err := persist.Remove(s.path(downloadPart)); err != nil {
			return err
		}
		if err := persist.WriteFile(s.path(downloadRecord), rec, 0o644); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(s.path(downloadPart), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if st.Size() < offset {
		return fmt.Errorf("node: download part holds %d bytes, cannot continue at %d", st.Size(), offset)
	}
	// A part longer than offset holds a chunk written before a crash whose
	// acknowledgement was lost: write over it.
	if _, err := f.WriteAt(data, offset); err != nil {
		return fmt.Errorf("node: writing the download: %w", err)
	}
	if err := f.Truncate(offset + int64(len(data))); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("node: syncing the download: %w", err)
	}
	return nil
}

// ClearDownload forgets a download (installed, refused or superseded).
func (s *Store) ClearDownload() error {
	return errors.Join(persist.Remove(s.path(downloadPart)), persist.Remove(s.path(downloadRecord)))
}
